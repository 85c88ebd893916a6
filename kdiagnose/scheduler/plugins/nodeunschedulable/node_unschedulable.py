"""NodeUnschedulable: cordoned nodes reject pods that do not tolerate the unschedulable taint
(plugins/nodeunschedulable/node_unschedulable.go)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.model.objects import Taint
from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SUCCESS, CycleState, Plugin, Status

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo

__all__ = ["ERR_REASON_UNKNOWN_CONDITION", "ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

# v1.TaintNodeUnschedulable with effect NoSchedule: tolerating it also tolerates spec.unschedulable.
_UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(Plugin):
    name = names.NODE_UNSCHEDULABLE

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not node_info.node.unschedulable:
            return SUCCESS
        if any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return SUCCESS
        return Status.unresolvable(ERR_REASON_UNSCHEDULABLE, details=({"unschedulable": True},))

    def filter_many(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
        # The verdict reads only the node's spec.unschedulable and the pod's tolerations: a pod that
        # tolerates the cordon passes every node; otherwise cordoned nodes share one rejection.
        if any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return [SUCCESS] * len(nodes)
        rejection: Status | None = None
        out: list[Status] = []
        for ni in nodes:
            if not ni.node.unschedulable:
                out.append(SUCCESS)
                continue
            if rejection is None:
                rejection = self.filter(state, pod, ni)
            out.append(rejection)
        return out
