"""`kdiagnose check -o github`: GitHub Actions workflow commands, one annotation per finding.

`::error` for workloads failing the --fail-on policy and for input that could not be read, `::warning`
for workloads that pass only by preemption or scale-up and for warnings about the snapshot, `::notice`
for notes (gate/findings.py). Each names `file` (relative to the path base, as GitHub maps annotations
onto the repository; a file outside the base is named only in the message), `line` and `col` of the field to blame or of the object's `apiVersion` line, and a
`title`. Escaping follows the Actions runner (actions/toolkit command.ts): in the message `%`, `\\r`, `\\n`
become `%25`, `%0D`, `%0A`; in property values `:` and `,` also become `%3A` and `%2C`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.gate.findings import findings

if TYPE_CHECKING:
    from kdiagnose.gate.result import GateResult

__all__ = ["COMMANDS", "escape_data", "escape_property", "render"]

COMMANDS = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(result: GateResult) -> str:
    lines = []
    for f in findings(result):
        props = []
        loc = f.location
        if loc is not None and loc.file and not loc.outside:  # an outside path maps to no repository file
            props.append(f"file={escape_property(loc.container)}")  # an archive's member: the archive
            if loc.line > 0 and not loc.member:
                props.append(f"line={loc.line}")
                if loc.column > 0:
                    props.append(f"col={loc.column}")
        props.append(f"title={escape_property(f.title)}")
        lines.append(f"::{COMMANDS[f.level]} {','.join(props)}::{escape_data(f.message)}")
    if result.errors:
        lines.append(f"kdiagnose check: invalid input, nothing was checked ({len(result.errors)} error(s))")
    else:
        lines.append(
            f"kdiagnose check: {len(result.failing)} of {len(result.results)} workload(s) fail the policy "
            f"(--fail-on {result.fail_on})"
        )
    return "\n".join(lines) + "\n"
