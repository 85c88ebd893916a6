"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay even
(plugins/noderesources/balanced_allocation.go over resource_allocation.go; v1.36 scores the change the
pod makes to the node's balance)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import MAX_NODE_SCORE, SKIP, SUCCESS, CycleState, Handle, Plugin, Status
from kdiagnose.scheduler.plugins.noderesources.fit import ResourceScorer, cpu_memory_column, parse_resources

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo

__all__ = ["BalancedAllocation", "balanced_improvement_score", "balanced_resource_score"]

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


def balanced_improvement_score(requested: list[int], allocated: list[int], allocatable: list[int]) -> int:
    """v1.36+ balancedResourceScorer (#135573): the balance with the pod against the balance without it.

    Both sides are in [50, 100]; MaxNodeScore/2 + (MaxNodeScore/2 + with - without)/2 maps their difference
    back into [50, 100], 75 when the pod changes nothing (Go integer division; the operand is never negative)."""
    with_pod = balanced_resource_score(requested, allocatable)
    without_pod = balanced_resource_score(allocated, allocatable)
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2


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
        dra = self.scorer.dra_totals(self.snapshot, self.dialect)
        if not self.dialect.balanced_scores_improvement:
            return self.scorer.score(node_info, reqs, dra)
        if not self.scorer.names:
            return 0, Status.error("resources not found")
        requested, allocatable = self.scorer.vectors(node_info, reqs, dra)
        # calculateNodeAllocatableRequest: `allocated` is what the node holds before the pod, set exactly
        # where `requested` (allocated + the pod's request) is.
        allocated = [q - p if a else 0 for q, p, a in zip(requested, reqs, allocatable, strict=True)]
        return balanced_improvement_score(requested, allocated, allocatable), SUCCESS

    def score_many(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """`score` per node in one loop over cpu and memory (the default resources): the same float64
        fractions and truncation as `balanced_resource_score` with its two-resource std, inlined. Other
        resource lists (and a PreScore that did not run) score node by node."""
        reqs: list[int] | None = state.read(_PRE_SCORE_KEY)
        if reqs is None or not self.scorer.cpu_memory:
            return super().score_many(state, pod, nodes)
        q_cpu, q_mem = reqs
        improvement = self.dialect.balanced_scores_improvement
        top = float(MAX_NODE_SCORE)
        half = MAX_NODE_SCORE // 2
        # One fraction or none: std 0, a score of 100 with and without the pod (75 as an improvement).
        even = half + half // 2 if improvement else MAX_NODE_SCORE
        out: list[int] = []
        append = out.append
        for a_cpu, a_mem, u_cpu, u_mem, _, _ in cpu_memory_column(nodes):
            if not (a_cpu and a_mem):
                append(even)
                continue
            with_pod = int(
                (1 - abs((min((u_cpu + q_cpu) / a_cpu, 1.0) - min((u_mem + q_mem) / a_mem, 1.0)) / 2)) * top
            )
            if not improvement:
                append(with_pod)
                continue
            without = int((1 - abs((min(u_cpu / a_cpu, 1.0) - min(u_mem / a_mem, 1.0)) / 2)) * top)
            append(half + (half + with_pod - without) // 2)
        return out, None
