"""The gate's policy: outcomes from best to worst, `--fail-on`, what is ignored, the exit code.

Outcomes, from best to worst: fits now < fits only by preemption < fits only after scale-up (a remedy of
kind scale-pool proved a new pool node helps) < never fits. `--fail-on X` fails every workload whose
outcome is X or worse (default unschedulable = never fits).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from kdiagnose.exitcodes import ExitCode

if TYPE_CHECKING:
    from kdiagnose.gate.config import GateConfig
    from kdiagnose.gate.result import GateResult, WorkloadResult
    from kdiagnose.load.manifests import Workload

__all__ = ["FAIL_ON", "THRESHOLD", "Outcome", "apply_policy", "exit_code", "ignore_reason"]

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
        r.fails_policy = r.outcome.severity >= threshold


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
