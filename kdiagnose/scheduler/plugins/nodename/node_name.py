"""NodeName: a pod with spec.nodeName fits only that node (plugins/nodename/node_name.go)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SUCCESS, CycleState, Plugin, Status

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo

__all__ = ["ERR_REASON", "NodeName", "fits"]

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    return not pod.node_name or pod.node_name == node_info.name


class NodeName(Plugin):
    name = names.NODE_NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if fits(pod, node_info):
            return SUCCESS
        return Status.unresolvable(ERR_REASON, details=({"nodeName": pod.node_name},))

    def filter_many(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
        # Most pending pods name no node: every node fits, no call per node.
        if not pod.node_name:
            return [SUCCESS] * len(nodes)
        return super().filter_many(state, pod, nodes)
