"""The gate's policy: outcomes from best to worst, `--fail-on`, what is ignored, the exit code.

Outcomes, from best to worst: fits now < fits only by preemption < fits only after scale-up (a remedy of
kind scale-pool proved a new pool node helps) < never fits. `--fail-on X` fails every workload whose
outcome is X or worse (default unschedulable = never fits).

"Fits only after scale-up" is only as good as the scale-up: it passes only when the snapshot shows an
autoscaler that can add that node (remedies/autoscaler.py: cluster-autoscaler status with room below
maxSize for the group, a Karpenter NodePool whose requirements, taints and limits admit the pod, or a
`--pools` entry with a max above current). With no such evidence, or with the group at its max, in
backoff or unhealthy, it fails whatever --fail-on says, and says why (WorkloadResult.scale_up).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from kdiagnose.exitcodes import ExitCode

if TYPE_CHECKING:
    from kdiagnose.gate.config import GateConfig
    from kdiagnose.gate.result import GateResult, WorkloadResult
    from kdiagnose.load.manifests import Workload
    from kdiagnose.results import Remedy

__all__ = [
    "FAIL_ON",
    "THRESHOLD",
    "Outcome",
    "apply_policy",
    "exit_code",
    "ignore_reason",
    "scale_up_verdict",
]

FAIL_ON = ("unschedulable", "preemption", "scale-up")


class Outcome(StrEnum):
    FITS = "fits"
    PREEMPTION = "preemption"  # fits only by preempting lower-priority pods
    SCALE_UP = "scale-up"  # fits only on a node a pool would add
    UNSCHEDULABLE = "unschedulable"  # never fits
    NOT_CHECKED = "not-checked"  # another scheduler's pod, scheduling gates: no verdict
    IGNORED = "ignored"

    @property
    def severity(self) -> int:
        return _SEVERITY[self]


_SEVERITY = {
    Outcome.IGNORED: -1,
    Outcome.NOT_CHECKED: -1,
    Outcome.FITS: 0,
    Outcome.PREEMPTION: 1,
    Outcome.SCALE_UP: 2,
    Outcome.UNSCHEDULABLE: 3,
}
THRESHOLD = {"preemption": 1, "scale-up": 2, "unschedulable": 3}


def apply_policy(results: list[WorkloadResult], fail_on: str) -> None:
    """Mark every result whose outcome is `fail_on` or worse."""
    threshold = THRESHOLD[fail_on]
    for r in results:
        # A scale-up no autoscaler in the snapshot can perform is not a pass (module docstring).
        r.fails_policy = r.outcome.severity >= threshold or (
            r.outcome == Outcome.SCALE_UP and not r.scale_up_ok
        )


def scale_up_verdict(remedies: list[Remedy]) -> tuple[bool, str]:
    """(passes, text) for a workload that fits only on a new node: passes when a scale-up remedy's
    autoscaler evidence says the node can be added (remedies/autoscaler.py `details["autoscaler"]`)."""
    from kdiagnose.remedies.autoscaler import SCALE_UP_KINDS

    ups = [r for r in remedies if r.kind in SCALE_UP_KINDS]
    for r in ups:
        a = r.details.get("autoscaler") or {}
        if a.get("can_add"):
            return True, f"fits after scale-up of {a.get('room') or r.details.get('pool')}"
    if not ups:
        return False, "fits only after scale-up"
    a = ups[0].details.get("autoscaler") or {}
    pool = ups[0].details.get("pool") or a.get("group")
    why = a.get("blocked") or "no autoscaler evidence"
    return False, f"fits only after scale-up of pool {pool}, which no autoscaler can add now: {why}"


def ignore_reason(w: Workload, config: GateConfig | None) -> str:
    from kdiagnose.load.manifests import IGNORE_ANNOTATION

    if w.ignored:
        return f'annotation {IGNORE_ANNOTATION}: "true"'
    if config is not None:
        rule = config.ignored(w.kind, w.namespace, w.name)
        if rule is not None:
            return f"ignored by {config.path or 'the config'} ({rule})"
    return ""


def exit_code(result: GateResult) -> ExitCode:
    return ExitCode.UNSCHEDULABLE if result.failing else ExitCode.OK
