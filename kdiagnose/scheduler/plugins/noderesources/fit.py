"""NodeResourcesFit: requests must fit the node's free allocatable; scoring strategies LeastAllocated,
MostAllocated, RequestedToCapacityRatio (plugins/noderesources/{fit,resource_allocation,least_allocated,
most_allocated,requested_to_capacity_ratio}.go, helper/shape_score.go)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, not_
from typing import TYPE_CHECKING, Any

from kdiagnose.model.requests import pod_requests
from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    Code,
    CycleState,
    Handle,
    Plugin,
    PreFilterResult,
    Status,
)
from kdiagnose.scheduler.plugins.noderesources.resource_names import (
    is_extended_resource_name,
    is_scalar_resource_name,
)

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node, Pod
    from kdiagnose.model.snapshot import NodeInfo, Snapshot
    from kdiagnose.versions import Dialect

# (node, DRA-backed extended resource) -> (devices of its class on the node, how many are allocated)
DraTotals = Callable[["Node", str], tuple[int, int]]

__all__ = [
    "ERR_REASON_TOO_MANY_PODS",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "Fit",
    "InsufficientResource",
    "ResourceScorer",
    "broken_linear",
    "fits_request",
    "go_round",
    "insufficient_reason",
]

ERR_REASON_TOO_MANY_PODS = "Too many pods"
_ERR_REASON_INSUFFICIENT_FMT = "Insufficient {}"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"

# config.MaxCustomPriorityScore: shape scores are 0-10, scaled to MaxNodeScore.
MAX_CUSTOM_PRIORITY_SCORE = 10
_MAX_UTILIZATION = 100
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))

_PRE_FILTER_KEY = "PreFilter" + names.NODE_RESOURCES_FIT
_PRE_SCORE_KEY = "PreScore" + names.NODE_RESOURCES_FIT
_FIXED = ("cpu", "memory", "ephemeral-storage")  # the order of NodeInfo.free's last three
_NOT_REQUESTED = -math.inf  # the bound of a resource the pod does not request (fit.py filter_many)
_FREE = attrgetter("free")
_CPU_MEMORY = attrgetter("cpu_memory")


def free_room(ni: NodeInfo) -> tuple[int, int, int, int]:
    """NodeInfo.free: how many more pods fit (allocatable pods - bound pods) and the free cpu, memory and
    ephemeral-storage (allocatable - requested), kept on the NodeInfo until add_pod/remove_pod drops it."""
    free = ni.free
    if free is None:
        alloc, used = ni.allocatable, ni.requested
        free = ni.free = (
            alloc.get("pods", 0) - len(ni.pods),
            alloc.get("cpu", 0) - used.get("cpu", 0),
            alloc.get("memory", 0) - used.get("memory", 0),
            alloc.get("ephemeral-storage", 0) - used.get("ephemeral-storage", 0),
        )
    return free


def cpu_memory(ni: NodeInfo) -> tuple[int, int, int, int, int, int]:
    """NodeInfo.cpu_memory: allocatable cpu and memory, requested cpu and memory, and the non-zero requests
    (the scorers' default resources), kept on the NodeInfo until add_pod/remove_pod drops it: a pod's
    score loop over 5,000 nodes then reads one tuple per node, not six dict and attribute lookups."""
    cm = ni.cpu_memory
    if cm is None:
        alloc, used = ni.allocatable, ni.requested
        cm = ni.cpu_memory = (
            alloc.get("cpu", 0),
            alloc.get("memory", 0),
            used.get("cpu", 0),
            used.get("memory", 0),
            ni.non_zero_cpu,
            ni.non_zero_mem,
        )
    return cm


def cpu_memory_column(nodes: list[NodeInfo]) -> list[tuple[int, int, int, int, int, int]]:
    """`cpu_memory` of each node, read in C when every node has it already."""
    column = list(map(_CPU_MEMORY, nodes))
    if None in column:
        column = list(map(cpu_memory, nodes))
    return column


def insufficient_reason(resource: str) -> str:
    return _ERR_REASON_INSUFFICIENT_FMT.format(resource)


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    resource: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool

    def details(self) -> dict[str, Any]:
        return {
            "resource": self.resource,
            "requested": self.requested,
            "free": self.capacity - self.used,
            "allocatable": self.capacity,
        }


@dataclass(frozen=True, slots=True)
class _PodRequest:
    """framework.Resource of the pod: cpu/memory/ephemeral-storage plus scalar resources (sorted names)."""

    fixed: tuple[tuple[str, int], ...]
    scalar: tuple[tuple[str, int], ...]

    @property
    def empty(self) -> bool:
        return all(v == 0 for _, v in self.fixed) and not self.scalar


def _pod_request(pod: Pod) -> _PodRequest:
    reqs = pod.requests
    fixed = tuple((r, reqs.get(r, 0)) for r in _FIXED)
    # SetMaxResource keeps only scalar names besides the fixed ones; Go iterates the map in random order,
    # sorted here so reasons are stable.
    scalar = tuple(
        (k, reqs[k]) for k in sorted(reqs) if k not in _FIXED and k != "pods" and is_scalar_resource_name(k)
    )
    return _PodRequest(fixed, scalar)


def fits_request(
    req: _PodRequest,
    node_info: NodeInfo,
    ignored: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
    dra_mapped: frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """fitsRequest: pods first, then cpu, memory, ephemeral-storage, then scalar resources."""
    out: list[InsufficientResource] = []
    alloc = node_info.allocatable
    used = node_info.requested
    allowed = alloc.get("pods", 0)
    n_pods = len(node_info.pods)
    if n_pods + 1 > allowed:
        out.append(InsufficientResource("pods", ERR_REASON_TOO_MANY_PODS, 1, n_pods, allowed, False))
    if req.empty:
        return out
    for r, q in req.fixed:
        if q <= 0:
            continue
        a, u = alloc.get(r, 0), used.get(r, 0)
        if q > a - u:
            out.append(InsufficientResource(r, insufficient_reason(r), q, u, a, q > a))
    for r, q in req.scalar:
        if q == 0:
            continue
        if is_extended_resource_name(r) and (
            r in ignored or (ignored_groups and r.split("/")[0] in ignored_groups)
        ):
            continue
        if r in dra_mapped and alloc.get(r, 0) <= 0:
            continue  # shouldDelegateResourceToDRA (v1.36+): DynamicResources allocates it on this node
        a, u = alloc.get(r, 0), used.get(r, 0)
        if q > a - u:
            out.append(InsufficientResource(r, insufficient_reason(r), q, u, a, q > a))
    return out


# ---- scoring -----------------------------------------------------------------------------------------

ScoreFn = Callable[[list[int], list[int]], int]


def _least_requested(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def _most_requested(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def _weighted_truncating(per: Callable[[int, int], int], weights: list[int]) -> ScoreFn:
    """least/most allocated: Σ score·w / Σ w with integer division (truncates)."""

    def score(requested: list[int], allocatable: list[int]) -> int:
        total = wsum = 0
        for i, req in enumerate(requested):
            if allocatable[i] == 0:
                continue
            total += per(req, allocatable[i]) * weights[i]
            wsum += weights[i]
        return total // wsum if wsum else 0

    return score


def broken_linear(shape: list[tuple[int, int]]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction over (utilization, score) points sorted by utilization."""

    def f(p: int) -> int:
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return s
                pu, ps = shape[i - 1]
                return ps + _go_div((s - ps) * (p - pu), u - pu)
        return shape[-1][1]

    return f


def _go_div(a: int, b: int) -> int:
    """Go integer division truncates toward zero (shape segments may descend)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_round(x: float) -> int:
    """math.Round: half away from zero."""
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


def _rtcr(shape_points: list[tuple[int, int]], weights: list[int]) -> ScoreFn:
    raw = broken_linear([(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape_points])

    def per(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(_MAX_UTILIZATION)
        return raw(requested * _MAX_UTILIZATION // capacity)

    def score(requested: list[int], allocatable: list[int]) -> int:
        total = wsum = 0
        for i, req in enumerate(requested):
            if allocatable[i] == 0:
                continue
            s = per(req, allocatable[i])
            # Only resources scoring above zero count towards the weights (requested_to_capacity_ratio.go).
            if s > 0:
                total += s * weights[i]
                wsum += weights[i]
        return go_round(total / wsum) if wsum else 0

    return score


def parse_resources(raw: Any) -> list[tuple[str, int]]:
    """[]ResourceSpec with v1 defaulting: none -> cpu:1, memory:1; a weight of 0 -> 1."""
    if not isinstance(raw, list) or not raw:
        return list(DEFAULT_RESOURCES)
    out = []
    for r in raw:
        r = r if isinstance(r, dict) else {}
        w = r.get("weight")
        out.append((str(r.get("name") or ""), int(w) if isinstance(w, int) and w else 1))
    return out


class ResourceScorer:
    """resourceAllocationScorer: per configured resource, (allocatable, node requested + pod request)."""

    def __init__(
        self, resources: list[tuple[str, int]], fn: ScoreFn, use_requested: bool, strategy: str = ""
    ) -> None:
        self.resources = resources
        self.names = [r for r, _ in resources]
        self.fn = fn
        self.use_requested = use_requested
        self.strategy = strategy
        # The default resource list (cpu, then memory): what the batch scores inline (any weights).
        self.cpu_memory = self.names == ["cpu", "memory"]

    def pod_requests(self, pod: Pod, dialect: Dialect) -> list[int]:
        """calculatePodResourceRequestList for the incoming (pending) pod.

        With use_requested (BalancedAllocation) these are the pod's real requests. Otherwise (Fit) missing
        cpu/memory container requests get the non-zero defaults and pod-level requests are ignored: Fit's
        scorer is built without enablePodLevelResources upstream (fit.go NewFit), a quirk kept here."""
        if self.use_requested:
            reqs = pod.requests
        else:
            reqs = pod_requests(pod, dialect, use_status=False, non_missing=True, pod_level=False)
        return [reqs.get(r, 0) for r in self.names]

    def _alloc_request(
        self, node_info: NodeInfo, r: str, pod_req: int, dra: DraTotals | None
    ) -> tuple[int, int]:
        alloc = node_info.allocatable
        if pod_req == 0 and is_scalar_resource_name(r):
            return 0, 0
        if r == "cpu":
            used = node_info.requested.get("cpu", 0) if self.use_requested else node_info.non_zero_cpu
            return alloc.get("cpu", 0), used + pod_req
        if r == "memory":
            used = node_info.requested.get("memory", 0) if self.use_requested else node_info.non_zero_mem
            return alloc.get("memory", 0), used + pod_req
        if r == "ephemeral-storage":
            return alloc.get(r, 0), node_info.requested.get(r, 0) + pod_req
        if alloc.get(r, 0) == 0 and dra is not None:
            # calculateResourceAllocatableRequest: no device plugin capacity, so an extended resource a
            # DeviceClass maps counts the class's devices on the node and the allocated ones (v1.36+).
            total, used = dra(node_info.node, r)
            if total > 0:
                return total, used + pod_req
        if r in alloc and is_scalar_resource_name(r):
            return alloc[r], node_info.requested.get(r, 0) + pod_req
        return 0, 0

    def vectors(
        self, node_info: NodeInfo, pod_requests: list[int], dra: DraTotals | None = None
    ) -> tuple[list[int], list[int]]:
        requested = [0] * len(self.names)
        allocatable = [0] * len(self.names)
        for i, r in enumerate(self.names):
            a, q = self._alloc_request(node_info, r, pod_requests[i], dra)
            if a == 0:
                continue
            allocatable[i] = a
            requested[i] = q
        return requested, allocatable

    def score(
        self, node_info: NodeInfo, pod_requests: list[int], dra: DraTotals | None = None
    ) -> tuple[int, Status]:
        if not self.names:
            return 0, Status.error("resources not found")
        requested, allocatable = self.vectors(node_info, pod_requests, dra)
        return self.fn(requested, allocatable), SUCCESS

    def dra_totals(self, snapshot: Snapshot, dialect: Dialect) -> DraTotals | None:
        """getDRAPreScoredParams: the DRA device counts, when some scored resource is an extended resource
        (or deviceclass.resource.kubernetes.io/...) that a DeviceClass maps (DRAExtendedResource, v1.36+)."""
        if not (dialect.dra_extended_resources and dialect.dra_enabled):
            return None
        from kdiagnose.scheduler.plugins.dynamicresources.allocator import DEVICE_CLASS_PREFIX, dra_index

        idx = dra_index(snapshot)
        if not any(
            (is_extended_resource_name(r) or r.startswith(DEVICE_CLASS_PREFIX)) and r in idx.extended
            for r in self.names
        ):
            return None
        return idx.extended_totals


def build_scorer(strategy: Any) -> ResourceScorer:
    """NodeResourcesFitArgs.scoringStrategy as defaulted by v1 SetDefaults_NodeResourcesFitArgs."""
    strategy = strategy if isinstance(strategy, dict) else {}
    kind = str(strategy.get("type") or LEAST_ALLOCATED)
    resources = parse_resources(strategy.get("resources"))
    weights = [w for _, w in resources]
    if kind == MOST_ALLOCATED:
        return ResourceScorer(
            resources, _weighted_truncating(_most_requested, weights), False, MOST_ALLOCATED
        )
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        rtcr = strategy.get("requestedToCapacityRatio") or {}
        points = []
        for p in (rtcr.get("shape") if isinstance(rtcr, dict) else None) or ():
            p = p if isinstance(p, dict) else {}
            points.append((int(p.get("utilization") or 0), int(p.get("score") or 0)))
        if not points:
            raise ValueError(
                "scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point"
            )
        return ResourceScorer(resources, _rtcr(points, weights), False)
    if kind != LEAST_ALLOCATED:
        raise ValueError(f"scoring strategy {kind} is not supported")
    return ResourceScorer(resources, _weighted_truncating(_least_requested, weights), False, LEAST_ALLOCATED)


class Fit(Plugin):
    name = names.NODE_RESOURCES_FIT

    def __init__(self, handle: Handle) -> None:
        super().__init__(handle)
        args = handle.args
        self.ignored = frozenset(str(x) for x in args.get("ignoredResources") or ())
        self.ignored_groups = frozenset(str(x) for x in args.get("ignoredResourceGroups") or ())
        self.scorer = build_scorer(args.get("scoringStrategy"))

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        state.write(_PRE_FILTER_KEY, _pod_request(pod))
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        req: _PodRequest | None = state.read(_PRE_FILTER_KEY)
        if req is None:
            # fit.go Filter: no fallback when PreFilter did not run (a profile that disables
            # NodeResourcesFit's PreFilter only): every node fails with this error.
            return Status.error(f'error reading "{_PRE_FILTER_KEY}" from cycleState: not found')
        return self._verdict(req, node_info, self._dra_mapped())

    def filter_many(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
        """`filter` over the nodes a column at a time: a node where the pod's cpu, memory and ephemeral-storage
        fit the free allocatable (and one more pod fits) passes on the integer comparisons `fits_request`
        makes, against each node's free room (`free_room`, kept on the NodeInfo until its pods change); the
        other nodes get filter's Status, built directly; a pod with scalar resources takes `filter`."""
        req: _PodRequest | None = state.read(_PRE_FILTER_KEY)
        if req is None or req.scalar:
            return super().filter_many(state, pod, nodes)
        frees = list(map(_FREE, nodes))
        if None in frees:
            frees = list(map(free_room, nodes))
        # fits: one more pod fits (room >= 1) and, per requested fixed resource, request <= free; a
        # resource not requested (0) is not compared (its bound: below any free amount, even a negative
        # one). One comprehension over the tuples: a third of the time of a C-level map per resource.
        q_cpu, q_mem, q_eph = (q if q > 0 else _NOT_REQUESTED for _, q in req.fixed)
        fits = [room > 0 and cpu >= q_cpu and mem >= q_mem and eph >= q_eph for room, cpu, mem, eph in frees]
        out = [SUCCESS] * len(nodes)
        if all(fits):
            return out
        wanted = [(r, q, insufficient_reason(r)) for r, q in req.fixed if q > 0]
        uu = self.dialect.fit_uu_over_allocatable
        for j in compress(range(len(nodes)), map(not_, fits)):
            ni = nodes[j]
            alloc = ni.allocatable
            n_pods = len(ni.pods)
            allowed = alloc.get("pods", 0)
            used = ni.requested
            # fits_request's InsufficientResources and filter's Status, built directly.
            reasons: list[str] = []
            details: list[dict[str, Any]] = []
            unresolvable = False
            if n_pods + 1 > allowed:
                reasons.append(ERR_REASON_TOO_MANY_PODS)
                details.append(
                    {"resource": "pods", "requested": 1, "free": allowed - n_pods, "allocatable": allowed}
                )
            for r, q, reason in wanted:
                a, u = alloc.get(r, 0), used.get(r, 0)
                if q > a - u:
                    reasons.append(reason)
                    details.append({"resource": r, "requested": q, "free": a - u, "allocatable": a})
                    unresolvable = unresolvable or q > a
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if uu and unresolvable else Code.UNSCHEDULABLE
            out[j] = Status(code, tuple(reasons), self.name, tuple(details))
        return out

    def _verdict(self, req: _PodRequest, node_info: NodeInfo, dra_mapped: frozenset[str]) -> Status:
        insufficient = fits_request(req, node_info, self.ignored, self.ignored_groups, dra_mapped)
        if not insufficient:
            return SUCCESS
        code = Code.UNSCHEDULABLE
        if self.dialect.fit_uu_over_allocatable and any(i.unresolvable for i in insufficient):
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        # Named here (filter_many too): the runner's with_plugin then keeps this object, one Status per node.
        return Status(
            code, tuple(i.reason for i in insufficient), self.name, tuple(i.details() for i in insufficient)
        )

    def _dra_mapped(self) -> frozenset[str]:
        """The extended resource names DeviceClasses map (DRAExtendedResource, v1.36+; DRA in the profile)."""
        if not (self.dialect.dra_extended_resources and self.dialect.dra_enabled):
            return frozenset()
        from kdiagnose.scheduler.plugins.dynamicresources.allocator import dra_index

        return frozenset(dra_index(self.snapshot).extended)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        state.write(_PRE_SCORE_KEY, self.scorer.pod_requests(pod, self.dialect))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        reqs: list[int] | None = state.read(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = self.scorer.pod_requests(pod, self.dialect)
        return self.scorer.score(node_info, reqs, self.scorer.dra_totals(self.snapshot, self.dialect))

    def score_many(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """`score` per node in one loop for LeastAllocated/MostAllocated over cpu and memory (the default
        resources, any weights): allocatable against the node's non-zero requests plus the pod's, as
        `ResourceScorer.vectors` and `_weighted_truncating` compute them (integers only, the same result).
        Other strategies and resource lists score node by node."""
        sc = self.scorer
        if not sc.cpu_memory or sc.strategy not in (LEAST_ALLOCATED, MOST_ALLOCATED):
            return super().score_many(state, pod, nodes)
        reqs: list[int] | None = state.read(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = sc.pod_requests(pod, self.dialect)
        q_cpu, q_mem = reqs
        w_cpu, w_mem = sc.resources[0][1], sc.resources[1][1]
        least = sc.strategy == LEAST_ALLOCATED
        top = MAX_NODE_SCORE
        out: list[int] = []
        append = out.append
        for a_cpu, a_mem, _, _, nz_cpu, nz_mem in cpu_memory_column(nodes):
            total = wsum = 0
            if a_cpu:
                r = nz_cpu + q_cpu
                if least:
                    total += (0 if r > a_cpu else (a_cpu - r) * top // a_cpu) * w_cpu
                else:
                    total += (min(r, a_cpu) * top // a_cpu) * w_cpu
                wsum += w_cpu
            if a_mem:
                r = nz_mem + q_mem
                if least:
                    total += (0 if r > a_mem else (a_mem - r) * top // a_mem) * w_mem
                else:
                    total += (min(r, a_mem) * top // a_mem) * w_mem
                wsum += w_mem
            append(total // wsum if wsum else 0)
        return out, None
