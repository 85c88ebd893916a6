"""PodTopologySpread PreFilter/Filter and the AddPod/RemovePod extensions (plugins/podtopologyspread/filtering.go).

PreFilter counts, per hard constraint, the matching pods of every eligible topology domain in one pass over
the pod's namespace; Filter is then a dictionary lookup per node.
"""

from __future__ import annotations

from itertools import compress
from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SKIP, SUCCESS, CycleState, PreFilterResult, Status
from kdiagnose.scheduler.plugins.helper.node_selector import RequiredNodeSelector, label_keys
from kdiagnose.scheduler.plugins.helper.spread import candidate_pods
from kdiagnose.scheduler.plugins.podtopologyspread.common import HONOR, SpreadConstraint, node_has_all_keys

if TYPE_CHECKING:
    from collections.abc import Iterable

    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo, Snapshot
    from kdiagnose.scheduler.plugins.podtopologyspread.plugin import PodTopologySpread

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "CriticalPaths",
    "PreFilterState",
    "filter_node",
    "pre_filter",
    "update_with_pod",
]

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

PRE_FILTER_STATE_KEY = "PreFilter" + names.POD_TOPOLOGY_SPREAD
_MAX_INT32 = 2**31 - 1


class CriticalPaths:
    """criticalPaths: the two topology values with the fewest matching pods; [0] always holds the minimum.
    Kept as upstream's two-slot structure (not a true minimum) so AddPod/RemovePod updates agree exactly."""

    __slots__ = ("paths",)

    def __init__(self) -> None:
        self.paths: list[list[Any]] = [["", _MAX_INT32], ["", _MAX_INT32]]

    def update(self, value: str, num: int) -> None:
        p = self.paths
        i = 0 if value == p[0][0] else 1 if value == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]

    @property
    def min_num(self) -> int:
        return int(self.paths[0][1])

    def clone(self) -> CriticalPaths:
        c = CriticalPaths()
        c.paths = [list(self.paths[0]), list(self.paths[1])]
        return c


class PreFilterState:
    """preFilterState: per constraint index, matching pods per topology value and the critical paths."""

    __slots__ = ("constraints", "counts", "critical_paths", "required")

    def __init__(self, constraints: list[SpreadConstraint], required: RequiredNodeSelector) -> None:
        self.constraints = constraints
        self.required = required
        self.counts: list[dict[str, int]] = [{} for _ in constraints]
        self.critical_paths: list[CriticalPaths] = [CriticalPaths() for _ in constraints]

    def min_match_num(self, i: int) -> int:
        """The global minimum, 0 when there are fewer eligible domains than minDomains."""
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.critical_paths[i].min_num

    def clone(self) -> PreFilterState:
        c = PreFilterState(self.constraints, self.required)
        c.counts = [dict(m) for m in self.counts]
        c.critical_paths = [p.clone() for p in self.critical_paths]
        return c


def spread_candidates(
    snapshot: Snapshot, namespace: str, constraints: list[SpreadConstraint]
) -> Iterable[tuple[Pod, NodeInfo]]:
    """Pods any of the constraints could count (each once); counting is order-free."""
    if len(constraints) == 1:
        return candidate_pods(snapshot, namespace, constraints[0].selector)
    seen: dict[int, tuple[Pod, NodeInfo]] = {}
    for c in constraints:
        for item in candidate_pods(snapshot, namespace, c.selector):
            seen.setdefault(id(item[0]), item)
    return seen.values()


def _node_domains(
    snapshot: Snapshot, pod: Pod, constraints: list[SpreadConstraint], required: RequiredNodeSelector
) -> list[dict[str, str]]:
    """Which domain each node contributes to, per constraint (node name -> value, in node order): nodes need
    every constraint's key and must pass that constraint's inclusion policies (calPreFilterState)."""
    sel_keys = label_keys(required) if any(c.node_affinity_policy == HONOR for c in constraints) else ()
    if sel_keys is None or not CLASS_DOMAINS:
        return _node_domains_per_node(snapshot.node_infos, pod, constraints, required)
    # Whether a node counts for a constraint is a function of which constraint keys it has, of the values of
    # the keys the required selector reads (no matchFields here) and of its taints when a policy honours
    # them: decided once per class of nodes (a pool's nodes share one), then the node columns are filtered
    # by class in C, not the inclusion policies run on every node.
    part = _node_classes(
        snapshot,
        tuple(c.topology_key for c in constraints),
        sel_keys,
        any(c.node_taints_policy == HONOR for c in constraints),
    )
    out: list[dict[str, str]] = []
    for c in constraints:
        counted = [
            node_has_all_keys(rep.node.labels, constraints) and c.include_node(pod, rep.node, required)
            for rep in part.reps
        ]
        mask = list(map(counted.__getitem__, part.class_of))
        # Counted nodes have the key: their values are strings (None only where the mask is False).
        values = compress(part.values[c.topology_key], mask)
        out.append(dict(zip(compress(part.names, mask), values, strict=True)))
    return out


class _NodeClasses:
    """The snapshot's nodes by class (see _node_domains): per node its class, in node order; one node per
    class; per topology key each node's value."""

    __slots__ = ("class_of", "index", "key", "names", "reps", "values")

    def __init__(self, nodes: list[NodeInfo], topo: tuple[str, ...], sel_keys: tuple[str, ...], taints: bool):
        self.key = (topo, sel_keys, taints)
        self.index: dict[Any, int] = {}
        self.reps: list[NodeInfo] = []
        self.class_of: list[int] = []
        self.names: list[str] = []
        self.values: dict[str, list[Any]] = {key: [] for key in topo}
        self._add(nodes)

    def _add(self, nodes: list[NodeInfo]) -> None:
        topo, sel_keys, taints = self.key
        index = self.index
        for ni in nodes:
            labels = ni.node.labels
            cls: Any = (tuple(map(labels.__contains__, topo)), tuple(map(labels.get, sel_keys)))
            if taints:
                cls = (cls, tuple(ni.node.taints))
            k = index.get(cls)
            if k is None:
                k = index[cls] = len(self.reps)
                self.reps.append(ni)
            self.class_of.append(k)
        self.names.extend(ni.name for ni in nodes)
        for key, column in self.values.items():
            column.extend(ni.node.labels.get(key) for ni in nodes)

    def extended(self, nodes: list[NodeInfo]) -> _NodeClasses:
        """These classes with `nodes` added after the ones they were made of (a copy): what building them
        over all of those nodes in that order gives, without a pass over the first ones again."""
        new = _NodeClasses.__new__(_NodeClasses)
        new.key = self.key
        new.index = dict(self.index)
        new.reps = list(self.reps)
        new.class_of = list(self.class_of)
        new.names = list(self.names)
        new.values = {key: list(column) for key, column in self.values.items()}
        new._add(nodes)
        return new


_CLASSES_KEY = "podtopologyspread:node-classes"


def _node_classes(
    snapshot: Snapshot, topo: tuple[str, ...], sel_keys: tuple[str, ...], taints: bool
) -> _NodeClasses:
    """_NodeClasses of the snapshot's nodes, remembered in `node_cache` (node-only data) per key set: the
    distinct pending pods that name the same keys (not values) share it."""
    memo: dict[Any, _NodeClasses] = snapshot.node_cache.setdefault(_CLASSES_KEY, {})
    key = (topo, sel_keys, taints)
    hit = memo.get(key)
    if hit is None:
        # Nodes added to the parent's (derive: a scale-up's simulated node): the parent's classes extended.
        base = snapshot.node_base
        made: _NodeClasses | None = base[0].get(_CLASSES_KEY, {}).get(key) if base is not None else None
        if base is not None and made is not None and len(made.names) == base[1] <= len(snapshot.node_infos):
            hit = made.extended(snapshot.node_infos[base[1] :])
        else:
            hit = _NodeClasses(snapshot.node_infos, topo, sel_keys, taints)
        if len(memo) >= _DOMAINS_KEPT:
            del memo[next(iter(memo))]
        memo[key] = hit
    return hit


def _node_domains_per_node(
    nodes: Iterable[NodeInfo], pod: Pod, constraints: list[SpreadConstraint], required: RequiredNodeSelector
) -> list[dict[str, str]]:
    """_node_domains the plain way, every policy checked on every node (matchFields; tests compare)."""
    node_domain: list[dict[str, str]] = [{} for _ in constraints]
    for ni in nodes:
        node = ni.node
        labels = node.labels
        if not node_has_all_keys(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.include_node(pod, node, required):
                continue
            node_domain[i][ni.name] = labels[c.topology_key]
    return node_domain


# Off: every node's inclusion policies are checked node by node (tests compare the two).
CLASS_DOMAINS = True
_DOMAINS_KEY = "podtopologyspread:node-domains"
_DOMAINS_KEPT = 8  # a pod's diagnosis and its what-ifs share one; distinct pending pods each have theirs
# Off: every PreFilter computes the node domains again (tests compare the two).
MEMO_DOMAINS = True


def node_domains(
    snapshot: Snapshot, pod: Pod, constraints: list[SpreadConstraint], required: RequiredNodeSelector
) -> list[dict[str, str]]:
    """`_node_domains` over the snapshot's nodes, remembered in `node_cache` (node-only data: the same
    nodes, bound pods aside, in every what-if derived without node changes). The domains read, per node,
    only its labels and taints; per pod, only the constraints' keys and policies, the required node
    selector (when a policy honours node affinity) and the tolerations (when one honours taints): those
    are the key. Callers must not change the dicts."""
    if not MEMO_DOMAINS:
        return _node_domains(snapshot, pod, constraints, required)
    key = (
        tuple((c.topology_key, c.node_affinity_policy, c.node_taints_policy) for c in constraints),
        required if any(c.node_affinity_policy == HONOR for c in constraints) else None,
        tuple(pod.tolerations) if any(c.node_taints_policy == HONOR for c in constraints) else None,
    )
    memo: dict[Any, list[dict[str, str]]] = snapshot.node_cache.setdefault(_DOMAINS_KEY, {})
    try:
        hit = memo.get(key)
    except TypeError:  # an unhashable selector value: not remembered
        return _node_domains(snapshot, pod, constraints, required)
    if hit is None:
        hit = _node_domains(snapshot, pod, constraints, required)
        if len(memo) >= _DOMAINS_KEPT:
            del memo[next(iter(memo))]
        memo[key] = hit
    return hit


def pre_filter(pl: PodTopologySpread, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
    """calPreFilterState over all nodes; Skip when the pod has no hard constraints."""
    constraints = pl.hard_constraints(pod)
    if not constraints:
        return None, SKIP
    required = RequiredNodeSelector.of(pod.node_selector, pod.affinity)
    s = PreFilterState(constraints, required)
    node_domain = node_domains(pl.snapshot, pod, constraints, required)
    # Eligible nodes register their domain even with no matching pod (in node order, as a pass over the
    # nodes setting each domain's count to 0 would).
    s.counts = [dict.fromkeys(nd.values(), 0) for nd in node_domain]
    active = [i for i, c in enumerate(constraints) if not c.counts_nothing and node_domain[i]]
    if active:
        for other, ni in spread_candidates(pl.snapshot, pod.namespace, [constraints[i] for i in active]):
            # Terminating pods are bypassed (kubernetes#87621).
            if other.deletion_timestamp is not None:
                continue
            for i in active:
                domain = node_domain[i].get(ni.name)
                if domain is not None and constraints[i].matches(other.labels):
                    s.counts[i][domain] += 1
    for i in range(len(constraints)):
        paths = s.critical_paths[i]
        for value, num in s.counts[i].items():
            paths.update(value, num)
    state.write(PRE_FILTER_STATE_KEY, s)
    return None, SUCCESS


def _state(state: CycleState) -> PreFilterState | None:
    s = state.read(PRE_FILTER_STATE_KEY)
    return s if isinstance(s, PreFilterState) else None


def filter_node(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
    s = _state(state)
    if s is None:
        return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    labels = node_info.node.labels
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return Status.unresolvable(
                ERR_REASON_NODE_LABEL_NOT_MATCH,
                details=({"constraint": c.describe(), "missingLabel": c.topology_key},),
            )
        # 'existing matching num' + 'self-match (1 or 0)' - 'global minimum' <= 'maxSkew'
        min_num = s.min_match_num(i)
        self_match = 1 if c.matches(pod.labels) else 0
        match_num = s.counts[i].get(value, 0)
        skew = match_num + self_match - min_num
        if skew > c.max_skew:
            return Status.unschedulable(
                ERR_REASON_CONSTRAINTS_NOT_MATCH,
                details=(
                    {
                        "constraint": c.describe(),
                        "topologyKey": c.topology_key,
                        "domain": value,
                        "matchingPods": match_num,
                        "selfMatch": self_match,
                        "globalMinimum": min_num,
                        "skew": skew,
                        "maxSkew": c.max_skew,
                        "eligibleDomains": len(s.counts[i]),
                        "minDomains": c.min_domains,
                    },
                ),
            )
    return SUCCESS


def filter_nodes(state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
    """`filter_node` over many nodes: a node passes when, for every constraint, it has the key and its
    domain's count is at most maxSkew + the global minimum - the pod's self-match (filter_node's test, the
    per-pod terms computed once); any other node gets filter_node's Status, built once per distinct tuple
    of the constraints' values (it reads the node only through them) and shared by the nodes that have it."""
    s = _state(state)
    if s is None or not BATCH_FILTER:
        return [filter_node(state, pod, ni) for ni in nodes]
    keys = [c.topology_key for c in s.constraints]
    limits = [
        c.max_skew + s.min_match_num(i) - (1 if c.matches(pod.labels) else 0)
        for i, c in enumerate(s.constraints)
    ]
    memo: dict[Any, Status] = {}
    out: list[Status] = []
    append = out.append
    if len(keys) == 1:
        # One constraint (the common case): its value is the class, no tuple per node.
        (key,), (limit,), (counts,) = keys, limits, s.counts
        for ni in nodes:
            v = ni.node.labels.get(key)
            if v is not None and counts.get(v, 0) <= limit:
                append(SUCCESS)
                continue
            st = memo.get(v)
            if st is None:
                st = memo[v] = filter_node(state, pod, ni)
            append(st)
        return out
    checks = list(zip(keys, limits, s.counts, strict=True))
    for ni in nodes:
        labels = ni.node.labels
        for key, limit, counts in checks:
            v = labels.get(key)
            if v is None or counts.get(v, 0) > limit:
                break
        else:
            append(SUCCESS)
            continue
        cls = tuple(map(labels.get, keys))
        st = memo.get(cls)
        if st is None:
            st = memo[cls] = filter_node(state, pod, ni)
        append(st)
    return out


# Off: filter_nodes calls filter_node on every node (tests compare the two).
BATCH_FILTER = True


def update_with_pod(
    state: CycleState, preemptor: Pod, updated: Pod, node_info: NodeInfo, delta: int
) -> Status:
    """updateWithPod (AddPod/RemovePod): adjust the counts for a pod added to or removed from a node.
    Upstream does not skip terminating pods here; neither do we."""
    s = _state(state)
    if s is None:
        return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    node = node_info.node
    if updated.namespace != preemptor.namespace or not node_has_all_keys(node.labels, s.constraints):
        return SUCCESS
    for i, c in enumerate(s.constraints):
        if not c.matches(updated.labels):
            continue
        if not c.include_node(preemptor, node, s.required):
            continue
        value = node.labels[c.topology_key]
        n = s.counts[i].get(value, 0) + delta
        s.counts[i][value] = n
        s.critical_paths[i].update(value, n)
    return SUCCESS
