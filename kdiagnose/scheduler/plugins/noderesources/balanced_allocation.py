"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay even
(plugins/noderesources/balanced_allocation.go over resource_allocation.go)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import MAX_NODE_SCORE, SKIP, SUCCESS, CycleState, Handle, Plugin, Status
from kdiagnose.scheduler.plugins.noderesources.fit import ResourceScorer, parse_resources

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo

__all__ = ["BalancedAllocation", "balanced_resource_score"]

_PRE_SCORE_KEY = "PreScore" + names.NODE_RESOURCES_BALANCED_ALLOCATION


def balanced_resource_score(requested: list[int], allocatable: list[int]) -> int:
    """balancedResourceScorer: (1 - std of the capped fractions) * 100, truncated; float64 as upstream."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        f = min(req / alloc, 1.0)
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        s = 0.0
        for f in fractions:
            s = s + (f - mean) * (f - mean)
        std = math.sqrt(s / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


class BalancedAllocation(Plugin):
    name = names.NODE_RESOURCES_BALANCED_ALLOCATION

    def __init__(self, handle: Handle) -> None:
        super().__init__(handle)
        # Real requests (useRequested): no non-zero defaults, node side is NodeInfo.requested.
        self.scorer = ResourceScorer(
            parse_resources(handle.args.get("resources")), balanced_resource_score, True
        )

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        reqs = self.scorer.pod_requests(pod, self.dialect)
        if self.dialect.balanced_skips_zero_request_pods and all(r == 0 for r in reqs):
            return SKIP
        state.write(_PRE_SCORE_KEY, reqs)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        reqs: list[int] | None = state.read(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = self.scorer.pod_requests(pod, self.dialect)
            if self.dialect.balanced_skips_zero_request_pods and all(r == 0 for r in reqs):
                return 0, SUCCESS
        return self.scorer.score(node_info, reqs)
