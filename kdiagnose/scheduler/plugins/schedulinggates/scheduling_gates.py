"""SchedulingGates: PreEnqueue keeps gated pods out of scheduling (plugins/schedulinggates/scheduling_gates.go).

The runner applies the gate itself (no attempt, no event); this module owns the reason text and the check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SUCCESS, Code, Plugin, Status

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod

__all__ = ["ERR_REASON_WAITING_FMT", "SchedulingGates", "gates_status"]

# fmt.Sprintf("waiting for scheduling gates: %v", gates) prints a []string as `[a b]`.
ERR_REASON_WAITING_FMT = "waiting for scheduling gates: [{}]"


def gates_status(pod: Pod) -> Status:
    """PreEnqueue: UnschedulableAndUnresolvable while the pod has scheduling gates."""
    if not pod.scheduling_gates:
        return SUCCESS
    reason = ERR_REASON_WAITING_FMT.format(" ".join(pod.scheduling_gates))
    return Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (reason,),
        names.SCHEDULING_GATES,
        ({"gates": list(pod.scheduling_gates)},),
    )


class SchedulingGates(Plugin):
    """PreEnqueue only; it has no Filter or Score."""

    name = names.SCHEDULING_GATES

    def pre_enqueue(self, pod: Pod) -> Status:
        return gates_status(pod)
