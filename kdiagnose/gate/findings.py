"""What `kdiagnose check` reports to CI, one list for every format (SARIF, JUnit, GitHub, JSON, human).

A finding has a level, a rule, a message and a location (locate.Location):
- error: a workload failing the --fail-on policy (rule = its outcome: unschedulable, scale-up, preemption),
  or input the gate could not read (rule input-error; nothing was checked);
- warning: a workload that passes only by preemption or after a scale-up the autoscaler can do; a warning
  about the snapshot or the input (rule snapshot-warning: a partial dump, an autoscaler status that could
  not be read, no workload in the manifests);
- note: a workload that was not checked (another scheduler, scheduling gates: rule not-checked), one whose
  every proven remedy is risky (rule risky-remedies), and the gate's notes on a workload (rule
  workload-note: existing pods kept, a suspended Job, a priorityClassName the snapshot cannot check).
Skipped workloads (ignore annotation or config) are no finding: JUnit shows them as skipped.

A workload's finding points at the field most to blame (blame.py) when there is one, else at the object's
`apiVersion` line; the object and the other blamed fields are its related locations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kdiagnose.gate.locate import DocRef, Location, PathBase, Sources
from kdiagnose.gate.where import locate

if TYPE_CHECKING:
    from kdiagnose.errors import KdiagnoseError
    from kdiagnose.gate.result import GateResult, InputProblem, WorkloadResult

__all__ = [
    "LEVELS",
    "RULES",
    "Finding",
    "findings",
    "input_problem",
    "locate",
    "workload_findings",
]

LEVELS = ("error", "warning", "note")

# (id, name, short description, default level): every rule a finding can have.
RULES: tuple[tuple[str, str, str, str], ...] = (
    (
        "unschedulable",
        "WorkloadUnschedulable",
        "A replica of the workload fits on no node of the cluster.",
        "error",
    ),
    (
        "scale-up",
        "WorkloadNeedsScaleUp",
        "A replica fits only on a node a node pool would have to add.",
        "error",
    ),
    (
        "preemption",
        "WorkloadNeedsPreemption",
        "A replica fits only by preempting lower-priority pods.",
        "error",
    ),
    (
        "not-checked",
        "WorkloadNotChecked",
        "The workload could not be checked (another scheduler, scheduling gates).",
        "note",
    ),
    (
        "risky-remedies",
        "OnlyRiskyRemedies",
        "Every remedy proven for the workload changes how or where it runs.",
        "note",
    ),
    (
        "workload-note",
        "WorkloadNote",
        "Something the check assumed or could not check about the workload.",
        "note",
    ),
    (
        "snapshot-warning",
        "SnapshotWarning",
        "The snapshot or the input may not show the whole cluster.",
        "warning",
    ),
    (
        "input-error",
        "InvalidInput",
        "A manifest or the snapshot could not be read: nothing was checked.",
        "error",
    ),
)


@dataclass(slots=True)
class Finding:
    level: str  # error | warning | note
    rule: str
    title: str  # one line
    message: str  # the full text (several lines)
    location: Location | None = None  # None: about the run, not a file
    related: list[Location] = field(default_factory=list)
    workload: WorkloadResult | None = None
    subject: str = ""  # input errors: the workload the error names ("Deployment web"), if any


# ---------------------------------------------------------------------------------------------- findings


def _warns(r: WorkloadResult) -> bool:
    return not r.fails_policy and r.outcome.value in ("preemption", "scale-up")


def _where(loc: Location | None) -> str:
    return loc.text if loc is not None else ""


def workload_findings(r: WorkloadResult) -> list[Finding]:
    """The findings of one workload (after locate)."""
    from kdiagnose.gate.formats.text import failure_text
    from kdiagnose.results import RISKY

    w = r.workload
    obj = r.location
    out: list[Finding] = []
    title = f"kdiagnose: {w.key} ({r.outcome.value})"
    in_files = [f for f in r.fields if f.file]
    primary = in_files[0] if in_files else obj
    related = [x for x in [obj, *in_files] if x is not None and x is not primary]
    if r.fails_policy or _warns(r):
        text = failure_text(r)
        out.append(
            Finding(
                "error" if r.fails_policy else "warning", r.outcome.value, title, text, primary, related, r
            )
        )
        remedies = r.failure.remedies if r.failure is not None else []
        if remedies and all(x.safety == RISKY for x in remedies):
            first = remedies[0]
            risk = f" ({first.risk})" if first.risk else ""
            out.append(
                Finding(
                    "note",
                    "risky-remedies",
                    f"kdiagnose: {w.key}: only risky remedies",
                    f"{w.key}: every remedy found is risky; the first: [{first.kind}] {first.summary}{risk}",
                    primary,
                    [],
                    r,
                )
            )
    elif r.outcome.value == "not-checked":
        out.append(Finding("note", "not-checked", title, f"{w.key} ({_where(obj)}): {r.summary}", obj, [], r))
    if not out and r.outcome.value != "ignored":
        # A failing or warning workload's notes are in its finding's text already.
        for n in r.notes:
            out.append(
                Finding("note", "workload-note", f"kdiagnose: {w.key}: note", f"{w.key}: {n}", obj, [], r)
            )
    return out


def findings(result: GateResult) -> list[Finding]:
    """Every finding, in input order (workloads), then the run's warnings, then input errors."""
    locate(result)
    out: list[Finding] = []
    for r in result.results:
        out.extend(workload_findings(r))
    for text in result.warnings:
        out.append(Finding("warning", "snapshot-warning", "kdiagnose: warning", text))
    for e in result.errors:
        title = f"kdiagnose: invalid input{': ' + e.workload if e.workload else ''}"
        out.append(Finding("error", "input-error", title, e.message, e.location, subject=e.workload))
    return out


# ---------------------------------------------------------------------------------------------- input errors

# load/raw.py where(): `file`, `file (document 3)`, `file (line 41)`, `file (document 3, line 41)`, then ": ".
_WHERE = re.compile(
    r"^(?P<file>.+?)(?: \((?:document (?P<doc>\d+))?(?:, )?(?:line (?P<line>\d+))?\))?: (?P<rest>.+)$", re.S
)
_OBJECT = re.compile(r"^(?P<kind>[A-Z][A-Za-z]+) (?P<name>[^\s:]+)")
_FIELD = re.compile(r"\b((?:spec|metadata)(?:\.[A-Za-z]+|\[\d+\])+)")


def _error_field(rest: str) -> tuple[str | int, ...]:
    """The field an error names: `spec.template spec.containers[0].resources.requests.cpu` -> path."""
    parts = _FIELD.findall(rest)
    steps: list[str | int] = []
    for p in parts:
        for m in re.finditer(r"([A-Za-z]+)|\[(\d+)\]", p):
            steps.append(m.group(1) if m.group(1) else int(m.group(2)))
    return tuple(steps)


def input_problem(error: KdiagnoseError, paths: PathBase, sources: Sources) -> InputProblem:
    """The error as the report shows it: the file and line of the object (its field when named)."""
    from kdiagnose.gate.result import InputProblem

    message = str(error)
    m = _WHERE.match(message)
    if m is None or (
        m.group("file") and " " in m.group("file") and not m.group("doc") and not m.group("line")
    ):
        return InputProblem(message)
    source = m.group("file")
    if source.startswith("--") or source.startswith("-f"):
        return InputProblem(message)
    doc = int(m.group("doc")) - 1 if m.group("doc") else 0
    line = int(m.group("line")) if m.group("line") else 0
    rest = m.group("rest")
    obj = _OBJECT.match(rest)
    workload = f"{obj.group('kind')} {obj.group('name')}" if obj and not rest.startswith("invalid") else ""
    ref = DocRef(source, doc, line)
    column = 0
    if workload:
        steps = _error_field(rest)
        pos = sources.field_position(ref, steps) if steps else None
        if pos is not None:
            line, column = pos
        else:
            line = sources.object_line(ref) or line
            column = 1 if line else 0
    return InputProblem(message, paths.location(source, line, column), workload)
