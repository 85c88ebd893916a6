"""NodeUnschedulable: cordoned nodes reject pods that do not tolerate the unschedulable taint
(plugins/nodeunschedulable/node_unschedulable.go)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.model.objects import Taint
from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SUCCESS, CycleState, Handle, Plugin, Status

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

    def __init__(self, handle: Handle) -> None:
        super().__init__(handle)
        # _cordoned: the snapshot's node list it was made for (its length then) and its cordoned positions.
        self._cordoned: tuple[list[NodeInfo], int, list[int]] | None = None

    def _cordoned_positions(self, nodes: list[NodeInfo]) -> list[int] | None:
        """The positions of the cordoned nodes when `nodes` is the snapshot's own node list (the first
        Filter plugin sees it whole), found once per snapshot; None for another list. Its elements change
        only by own_node_info's clone of the same node or by appending (the length tells)."""
        if nodes is not self.snapshot.node_infos:
            return None
        c = self._cordoned
        if c is None or c[0] is not nodes or c[1] != len(nodes):
            c = self._cordoned = (
                nodes,
                len(nodes),
                [i for i, ni in enumerate(nodes) if ni.node.unschedulable],
            )
        return c[2]

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
        cordoned = self._cordoned_positions(nodes)
        if cordoned is not None:
            # A pod's verdicts over the whole list: SUCCESS but at the (few) cordoned nodes.
            out = [SUCCESS] * len(nodes)
            if cordoned:
                shared = self.filter(state, pod, nodes[cordoned[0]])
                for i in cordoned:
                    out[i] = shared
            return out
        rejection: Status | None = None
        out = []
        for ni in nodes:
            if not ni.node.unschedulable:
                out.append(SUCCESS)
                continue
            if rejection is None:
                rejection = self.filter(state, pod, ni)
            out.append(rejection)
        return out
