"""`kdiagnose check -o github`: GitHub Actions workflow commands, one annotation per workload needing one.

`::error file=F,line=L,title=T::MESSAGE` for workloads failing the --fail-on policy, `::warning` for those
that fit only by preemption or scale-up but pass it. Escaping follows the Actions runner
(actions/toolkit command.ts): in the message `%`, `\\r`, `\\n` become `%25`, `%0D`, `%0A`; in property
values `:` and `,` also become `%3A` and `%2C`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.gate.formats.text import failure_text

if TYPE_CHECKING:
    from kdiagnose.gate.result import GateResult

__all__ = ["escape_data", "escape_property", "render"]


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(result: GateResult) -> str:
    lines = []
    for r in result.results:
        if r.fails_policy:
            command = "error"
        elif r.outcome.value in ("preemption", "scale-up"):
            command = "warning"
        else:
            continue
        w = r.workload
        props = []
        if not (w.source.startswith("<") and w.source.endswith(">")):
            props.append(f"file={escape_property(w.source)}")
            if w.line > 0:
                props.append(f"line={w.line}")
        props.append(f"title={escape_property(f'kdiagnose: {w.key} ({r.outcome.value})')}")
        lines.append(f"::{command} {','.join(props)}::{escape_data(failure_text(r))}")
    failing = len(result.failing)
    lines.append(
        f"kdiagnose check: {failing} of {len(result.results)} workload(s) fail the policy (--fail-on {result.fail_on})"
    )
    return "\n".join(lines) + "\n"
