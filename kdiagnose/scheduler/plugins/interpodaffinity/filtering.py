"""InterPodAffinity PreFilter/Filter and AddPod/RemovePod (plugins/interpodaffinity/filtering.go).

PreFilter counts, per (topologyKey, value), the existing pods matching the incoming pod's required terms and
the existing pods whose required anti-affinity matches the incoming pod; Filter is dictionary lookups.
"""

from __future__ import annotations

import itertools
from operator import attrgetter, itemgetter, le
from typing import TYPE_CHECKING, Any, TypeVar

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SKIP, SUCCESS, Code, CycleState, PreFilterResult, Status, add_note
from kdiagnose.scheduler.plugins.helper.spread import candidate_pods, pods_by_namespace
from kdiagnose.scheduler.plugins.interpodaffinity.terms import (
    AffinityTerm,
    merge_namespaces,
    pod_terms,
    terms_of,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from kdiagnose.model.objects import Node, Pod
    from kdiagnose.model.snapshot import NodeInfo, Snapshot
    from kdiagnose.scheduler.plugins.interpodaffinity.plugin import InterPodAffinity

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "PreFilterState",
    "filter_node",
    "pod_matches_all_terms",
    "pre_filter",
    "update_with_pod",
]

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
_ANTI_REASONS = (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,)

PRE_FILTER_STATE_KEY = "PreFilter" + names.INTER_POD_AFFINITY
_ANTI_INDEX_KEY = "interpodaffinity:nodes-with-required-anti-affinity"
_WITNESSES = 3  # pod names kept per topology pair for reports

Pair = tuple[str, str]


class _LazyWitnesses:
    """Example pods per pair built on first read, from the match list, exactly as the updates of a fresh
    PreFilter would have recorded them (a what-if's counts are adjusted from its parent's, not rebuilt).

    `base`: the parent's example pods, right for every pair outside `touched` (the label pairs of the nodes
    the what-if changed, before and after) when the matches on the other nodes are the parent's, in the
    parent's order: a pair's examples are its first matches in that order, and none of them is on a
    changed node. Those pairs are read from `base` without building the whole map (a hostname term that
    every node's pods match rejects each node with its own pair's examples)."""

    __slots__ = ("_base", "_build", "_built", "_touched")

    def __init__(
        self,
        build: Callable[[], dict[Pair, list[str]]],
        base: dict[Pair, list[str]] | _LazyWitnesses | None = None,
        touched: frozenset[Pair] = frozenset(),
    ) -> None:
        self._build: Callable[[], dict[Pair, list[str]]] | None = build
        self._built: dict[Pair, list[str]] = {}
        self._base = base
        self._touched = touched

    def materialize(self) -> dict[Pair, list[str]]:
        if self._build is not None:
            self._built = self._build()
            self._build = None
            self._base = None
        return self._built

    def get(self, pair: Pair, default: list[str]) -> list[str]:
        if self._base is not None and pair not in self._touched:
            return self._base.get(pair, default)
        return self.materialize().get(pair, default)


class Counts:
    """topologyToMatchedTermCount, plus a few example pods per pair (reports only; never read by Filter)."""

    __slots__ = ("counts", "witnesses")

    def __init__(self) -> None:
        self.counts: dict[Pair, int] = {}
        self.witnesses: dict[Pair, list[str]] | _LazyWitnesses = {}

    def update(self, node: Node, key: str, delta: int, who: str = "") -> None:
        value = node.labels.get(key)
        if value is None:
            return
        pair = (key, value)
        n = self.counts.get(pair, 0) + delta
        if n == 0:
            self.counts.pop(pair, None)
        else:
            self.counts[pair] = n
        if who and delta > 0:
            ws = self.witnesses
            if not isinstance(ws, dict):
                ws = self.witnesses = {k: list(v) for k, v in ws.materialize().items()}
            w = ws.setdefault(pair, [])
            if len(w) < _WITNESSES:
                w.append(who)

    def __len__(self) -> int:
        return len(self.counts)

    def get(self, pair: Pair) -> int:
        return self.counts.get(pair, 0)

    def clone(self) -> Counts:
        c = Counts()
        c.counts = dict(self.counts)
        c.witnesses = self.witnesses  # report-only, not mutated by add/remove
        return c


def pod_matches_all_terms(terms: Iterable[AffinityTerm], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms: false for no terms; namespace selectors are already merged (nil labels)."""
    any_term = False
    for t in terms:
        any_term = True
        if not t.matches(pod, None):
            return False
    return any_term


class PreFilterState:
    __slots__ = (
        "affinity",
        "affinity_counts",
        "anti_affinity",
        "anti_counts",
        "existing_anti_counts",
        "ns_labels",
        "pod",
    )

    def __init__(
        self,
        pod: Pod,
        affinity: tuple[AffinityTerm, ...],
        anti_affinity: tuple[AffinityTerm, ...],
        ns_labels: Mapping[str, str],
    ) -> None:
        self.pod = pod
        self.affinity = affinity
        self.anti_affinity = anti_affinity
        self.ns_labels = ns_labels
        self.existing_anti_counts = Counts()
        self.affinity_counts = Counts()
        self.anti_counts = Counts()

    def clone(self) -> PreFilterState:
        c = PreFilterState(self.pod, self.affinity, self.anti_affinity, self.ns_labels)
        c.existing_anti_counts = self.existing_anti_counts.clone()
        c.affinity_counts = self.affinity_counts.clone()
        c.anti_counts = self.anti_counts.clone()
        return c

    def update_with_pod(self, snapshot: Snapshot, other: Pod, node: Node, delta: int) -> None:
        for t in terms_of(snapshot, other).required_anti_affinity:
            if t.matches(self.pod, self.ns_labels):
                self.existing_anti_counts.update(node, t.topology_key, delta)
        if pod_matches_all_terms(self.affinity, other):
            for t in self.affinity:
                self.affinity_counts.update(node, t.topology_key, delta)
        for t in self.anti_affinity:
            if t.matches(other, None):
                self.anti_counts.update(node, t.topology_key, delta)


def _nodes_with_required_anti_affinity(snapshot: Snapshot) -> list[NodeInfo]:
    """HavePodsWithRequiredAntiAffinityList, built once per snapshot."""
    nodes: list[NodeInfo] | None = snapshot.cache.get(_ANTI_INDEX_KEY)
    if nodes is None:
        nodes = [ni for ni in snapshot.node_infos if ni.pods_with_required_anti_affinity]
        snapshot.cache[_ANTI_INDEX_KEY] = nodes
    return nodes


_EXISTING_ANTI_KEY = "interpodaffinity:existing-anti-affinity-matches"

AntiMatch = tuple["NodeInfo", "Pod", AffinityTerm]


def _compute_anti_matches(
    snapshot: Snapshot, nodes: Iterable[NodeInfo], pod: Pod, ns_labels: Mapping[str, str]
) -> list[AntiMatch]:
    out: list[AntiMatch] = []
    for ni in nodes:
        for existing in ni.pods_with_required_anti_affinity:
            for t in terms_of(snapshot, existing).required_anti_affinity:
                if t.matches(pod, ns_labels):
                    out.append((ni, existing, t))
    return out


def existing_anti_matches(snapshot: Snapshot, pod: Pod, ns_labels: Mapping[str, str]) -> list[AntiMatch]:
    """(node, existing pod, term) for every existing pod's required anti-affinity term that matches `pod`,
    in node order. Remembered per snapshot for the pod's namespace and labels; a derived snapshot (a
    remedy's what-if) takes its parent's list and recomputes only the nodes it changed."""
    key = (pod.namespace, tuple(sorted(pod.labels.items())), tuple(sorted(ns_labels.items())))
    memo: dict[Any, list[AntiMatch]] = snapshot.cache.setdefault(_EXISTING_ANTI_KEY, {})
    hit = memo.get(key)
    if hit is not None:
        return hit
    parent = snapshot.parent
    base = None
    if parent is not None and snapshot.parent_generation == parent.generation:
        base = (parent.cache.get(_EXISTING_ANTI_KEY) or {}).get(key)
    out: list[AntiMatch] | None = None
    if base is not None and parent is not None:
        changed = _changed_names(snapshot, parent)
        if changed is not None:
            out = [m for m in base if m[0].name not in changed]
            fresh = [
                ni for ni in snapshot.node_infos if ni.name in changed and ni.pods_with_required_anti_affinity
            ]
            if fresh:
                out = _in_node_order(
                    snapshot, out + _compute_anti_matches(snapshot, fresh, pod, ns_labels), 0
                )
    if out is None:
        out = _compute_anti_matches(snapshot, _nodes_with_required_anti_affinity(snapshot), pod, ns_labels)
    memo[key] = out
    return out


def _candidate_pods(snapshot: Snapshot, terms: tuple[AffinityTerm, ...]) -> Iterable[tuple[Pod, NodeInfo]]:
    """The bound pods any of `terms` could match: those of the named namespaces, or all pods when a term
    selects every namespace. Same result as scanning every node's pods, in one pass over fewer pods."""
    by_ns = pods_by_namespace(snapshot)
    everywhere = any(t.ns_selector == () for t in terms)
    namespaces = list(by_ns) if everywhere else sorted({ns for t in terms for ns in t.namespaces})
    # Through the label index: only pods some term's selector could match (each once, in any order).
    seen: set[int] = set()
    for ns in namespaces:
        for t in terms:
            for item in candidate_pods(snapshot, ns, t.selector):
                if len(terms) == 1:
                    yield item
                elif id(item[0]) not in seen:
                    seen.add(id(item[0]))
                    yield item


_OWN_TERMS_KEY = "interpodaffinity:own-term-matches"
_NAME = attrgetter("name")
_NODE_OF_MATCH = itemgetter(1)

_M = TypeVar("_M", bound=tuple[Any, ...])


def _in_node_order(snapshot: Snapshot, matches: list[_M], node_at: int) -> list[_M]:
    """`matches` sorted by the position of their node (item `node_at`) in the snapshot, stably: each
    node's matches keep their order (its pods' order). A sort of positions read in C, not a key call per
    match."""
    pos = snapshot.node_positions()
    at = list(map(pos.__getitem__, map(_NAME, map(itemgetter(node_at), matches))))
    return list(map(matches.__getitem__, sorted(range(len(matches)), key=at.__getitem__)))


# (existing pod, its node, whether it matches every required affinity term, the anti terms it matches)
OwnMatch = tuple["Pod", "NodeInfo", bool, tuple[int, ...]]


def _term_key(t: AffinityTerm) -> tuple[Any, ...]:
    """What a (namespace-merged) term's matches depend on: never the incoming pod itself, so pods with the
    same terms share one scan (the equivalence the scheduler's own PreFilter caches lack)."""
    return (t.namespaces, t.selector, t.topology_key, t.ns_selector)


def _scan_own(
    snapshot: Snapshot, affinity: tuple[AffinityTerm, ...], anti: tuple[AffinityTerm, ...]
) -> list[OwnMatch]:
    out: list[OwnMatch] = []
    for existing, ni in _candidate_pods(snapshot, affinity + anti):
        all_affinity = bool(affinity) and pod_matches_all_terms(affinity, existing)
        hits = tuple(i for i, t in enumerate(anti) if t.matches(existing, None))
        if all_affinity or hits:
            out.append((existing, ni, all_affinity, hits))
    return out


def _on_nodes(
    snapshot: Snapshot,
    nodes: Iterable[NodeInfo],
    affinity: tuple[AffinityTerm, ...],
    anti: tuple[AffinityTerm, ...],
) -> list[OwnMatch]:
    out: list[OwnMatch] = []
    for ni in nodes:
        for existing in ni.pods:
            all_affinity = bool(affinity) and pod_matches_all_terms(affinity, existing)
            hits = tuple(i for i, t in enumerate(anti) if t.matches(existing, None))
            if all_affinity or hits:
                out.append((existing, ni, all_affinity, hits))
    return out


_CHANGED_KEY = "interpodaffinity:changed-nodes"


def _changed_names(snapshot: Snapshot, parent: Snapshot) -> set[str] | None:
    """The nodes whose NodeInfo a what-if replaced, added or removed; None when most did (rebuild).
    Found once per what-if copy (every pod replayed on a pool's simulated node asks the same copy)."""
    hit: tuple[Snapshot, int, set[str] | None] | None = snapshot.cache.get(_CHANGED_KEY)
    if hit is not None and hit[0] is parent and hit[1] == parent.generation:
        return hit[2]
    theirs = parent.node_info_by_name
    mine = snapshot.node_info_by_name
    changed: set[str] | None = {ni.name for ni in snapshot.node_infos if theirs.get(ni.name) is not ni}
    assert changed is not None
    changed.update(name for name in theirs if name not in mine)
    if len(changed) * 4 > len(theirs):
        changed = None
    snapshot.cache[_CHANGED_KEY] = (parent, parent.generation, changed)
    return changed


def _touched_pairs(snapshot: Snapshot, parent: Snapshot, changed: set[str]) -> frozenset[Pair]:
    """Every label pair of the changed nodes, as they are here and as they were in the parent."""
    out: set[Pair] = set()
    for name in changed:
        for snap in (snapshot, parent):
            ni = snap.node_info_by_name.get(name)
            if ni is not None:
                out.update(ni.node.labels.items())
    return frozenset(out)


def own_term_matches(
    snapshot: Snapshot, affinity: tuple[AffinityTerm, ...], anti: tuple[AffinityTerm, ...]
) -> list[OwnMatch]:
    """The existing pods the incoming pod's required affinity/anti-affinity terms match, in the order
    PreFilter counts them (the order decides the example pods a report names). Remembered per snapshot by
    the terms, so pending pods with the same terms share it. A derived snapshot (a remedy's what-if) with
    a single term in a single namespace takes its parent's list and rescans only the nodes it changed:
    one term's candidates come in node order, then each node's pod order, as the list is sorted here."""
    key = (tuple(map(_term_key, affinity)), tuple(map(_term_key, anti)))
    memo: dict[Any, list[OwnMatch]] = snapshot.cache.setdefault(_OWN_TERMS_KEY, {})
    hit = memo.get(key)
    if hit is not None:
        return hit
    out: list[OwnMatch] | None = None
    terms = affinity + anti
    parent = snapshot.parent
    if (
        parent is not None
        and snapshot.parent_generation == parent.generation
        and len(terms) == 1
        and len(terms[0].namespaces) == 1
        and terms[0].ns_selector is None
        and terms[0].selector is not None
        and all(len(r.values) == 1 for r in terms[0].selector if r.op == "In")
    ):
        base = (parent.cache.get(_OWN_TERMS_KEY) or {}).get(key)
        changed = _changed_names(snapshot, parent) if base is not None else None
        if base is not None and changed is not None:
            pos = snapshot.node_positions()
            kept = [m for m in base if m[1].name not in changed]
            at = list(map(pos.__getitem__, map(_NAME, map(_NODE_OF_MATCH, kept))))
            # Node order holds unless pods were bound into the parent (Snapshot.bind appends them).
            if all(map(le, at, itertools.islice(at, 1, None))):
                fresh = [ni for ni in snapshot.node_infos if ni.name in changed]
                out = _in_node_order(snapshot, kept + _on_nodes(snapshot, fresh, affinity, anti), 1)
    if out is None:
        out = _scan_own(snapshot, affinity, anti)
    memo[key] = out
    return out


_OWN_COUNTS_KEY = "interpodaffinity:own-term-counts"


def _own_witnesses(
    matches: list[OwnMatch], affinity: tuple[AffinityTerm, ...], anti: tuple[AffinityTerm, ...]
) -> tuple[dict[Pair, list[str]], dict[Pair, list[str]]]:
    """The example pods the updates of a fresh PreFilter record, pair by pair, in match order."""
    out: tuple[dict[Pair, list[str]], dict[Pair, list[str]]] = ({}, {})
    for existing, ni, all_affinity, hits in matches:
        labels = ni.node.labels
        keys = [(0, t.topology_key) for t in affinity] if all_affinity else []
        keys += [(1, anti[i].topology_key) for i in hits]
        for which, key in keys:
            value = labels.get(key)
            if value is None:
                continue
            w = out[which].setdefault((key, value), [])
            if len(w) < _WITNESSES:
                w.append(existing.key)
    return out


def _count(
    matches: Iterable[OwnMatch],
    affinity: tuple[AffinityTerm, ...],
    anti: tuple[AffinityTerm, ...],
    aff: Counts,
    anti_counts: Counts,
    delta: int,
    with_witnesses: bool,
) -> None:
    for existing, ni, all_affinity, hits in matches:
        who = existing.key if with_witnesses else ""
        if all_affinity:
            for t in affinity:
                aff.update(ni.node, t.topology_key, delta, who)
        for i in hits:
            anti_counts.update(ni.node, anti[i].topology_key, delta, who)


def own_term_counts(
    snapshot: Snapshot, affinity: tuple[AffinityTerm, ...], anti: tuple[AffinityTerm, ...]
) -> tuple[Counts, Counts]:
    """The affinity and anti-affinity counts of own_term_matches (callers clone them). A what-if's are its
    parent's with the changed nodes' matches taken out and put back, the example pods read lazily."""
    key = (tuple(map(_term_key, affinity)), tuple(map(_term_key, anti)))
    memo: dict[Any, tuple[Counts, Counts]] = snapshot.cache.setdefault(_OWN_COUNTS_KEY, {})
    hit = memo.get(key)
    if hit is not None:
        return hit
    matches = own_term_matches(snapshot, affinity, anti)
    parent = snapshot.parent
    out: tuple[Counts, Counts] | None = None
    if parent is not None and snapshot.parent_generation == parent.generation:
        base = (parent.cache.get(_OWN_COUNTS_KEY) or {}).get(key)
        theirs = (parent.cache.get(_OWN_TERMS_KEY) or {}).get(key)
        changed = _changed_names(snapshot, parent) if base is not None and theirs is not None else None
        if base is not None and theirs is not None and changed is not None:
            aff, anti_counts = base[0].clone(), base[1].clone()
            _count((m for m in theirs if m[1].name in changed), affinity, anti, aff, anti_counts, -1, False)
            _count((m for m in matches if m[1].name in changed), affinity, anti, aff, anti_counts, 1, False)
            both: list[tuple[dict[Pair, list[str]], dict[Pair, list[str]]]] = []
            # The matches on the unchanged nodes, the same and in the same order here as in the parent
            # (the same NodeInfo objects and pods): then the parent's examples stand for the pairs that no
            # changed node has.
            same_rest = [m for m in theirs if m[1].name not in changed] == [
                m for m in matches if m[1].name not in changed
            ]
            touched = _touched_pairs(snapshot, parent, changed) if same_rest else frozenset()

            def side(which: int) -> Callable[[], dict[Pair, list[str]]]:
                def build() -> dict[Pair, list[str]]:
                    if not both:
                        both.append(_own_witnesses(matches, affinity, anti))
                    return both[0][which]

                return build

            if same_rest:
                aff.witnesses = _LazyWitnesses(side(0), base[0].witnesses, touched)
                anti_counts.witnesses = _LazyWitnesses(side(1), base[1].witnesses, touched)
            else:
                aff.witnesses, anti_counts.witnesses = _LazyWitnesses(side(0)), _LazyWitnesses(side(1))
            out = (aff, anti_counts)
    if out is None:
        aff, anti_counts = Counts(), Counts()
        _count(matches, affinity, anti, aff, anti_counts, 1, True)
        out = (aff, anti_counts)
    memo[key] = out
    return out


def pre_filter(pl: InterPodAffinity, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
    snapshot = pl.snapshot
    terms = pod_terms(pod)
    affinity = tuple(merge_namespaces(snapshot, t) for t in terms.required_affinity)
    anti = tuple(merge_namespaces(snapshot, t) for t in terms.required_anti_affinity)
    if not snapshot.has("Namespace") and any(
        t.ns_selector not in (None, ()) for t in (*terms.required_affinity, *terms.required_anti_affinity)
    ):
        add_note(
            state,
            "not checked: the input has no Namespaces; namespaceSelector resolved against the pods' namespaces",
        )
    ns_labels = snapshot.namespace_labels(pod.namespace)
    s = PreFilterState(pod, affinity, anti, ns_labels)

    for ni, existing, t in existing_anti_matches(snapshot, pod, ns_labels):
        s.existing_anti_counts.update(ni.node, t.topology_key, 1, existing.key)

    if affinity or anti:
        aff_counts, anti_counts = own_term_counts(snapshot, affinity, anti)
        s.affinity_counts, s.anti_counts = aff_counts.clone(), anti_counts.clone()

    if not s.existing_anti_counts and not affinity and not anti:
        return None, SKIP
    state.write(PRE_FILTER_STATE_KEY, s)
    return None, SUCCESS


def _state(state: CycleState) -> PreFilterState | None:
    s = state.read(PRE_FILTER_STATE_KEY)
    return s if isinstance(s, PreFilterState) else None


def _affinity_failure(s: PreFilterState, labels: Mapping[str, str]) -> dict[str, Any] | None:
    """satisfyPodAffinity, returning why not (None when satisfied)."""
    missing: dict[str, Any] | None = None
    for t in s.affinity:
        value = labels.get(t.topology_key)
        if value is None:
            return {"term": t.describe(), "missingLabel": t.topology_key}
        if s.affinity_counts.get((t.topology_key, value)) <= 0 and missing is None:
            missing = {"term": t.describe(), "domain": f"{t.topology_key}={value}", "matchingPods": 0}
    if missing is None:
        return None
    # The first pod of a group may land anywhere its own terms allow when no pod matches yet.
    if not s.affinity_counts and pod_matches_all_terms(s.affinity, s.pod):
        return None
    if not s.affinity_counts:
        missing["matchingPodsInCluster"] = 0
    return missing


def _own_anti_failure(
    s: PreFilterState, labels: Mapping[str, str], descs: list[str] | None = None
) -> Status | None:
    """satisfyPodAntiAffinity's rejection (None when satisfied): the first of the pod's own required
    anti-affinity terms that counts a pod in the node's domain. `descs`: the terms' describe() texts, when
    the caller judges many nodes."""
    if s.anti_counts:
        for i, t in enumerate(s.anti_affinity):
            value = labels.get(t.topology_key)
            if value is not None and (n := s.anti_counts.counts.get(pair := (t.topology_key, value), 0)) > 0:
                # The Status built directly (Status.unschedulable's varargs cost as much as the rest): a
                # hostname term that every node's pods match builds one per node. Named here (every
                # rejection of this plugin is): the runner's with_plugin then keeps this object.
                return Status(
                    Code.UNSCHEDULABLE,
                    _ANTI_REASONS,
                    names.INTER_POD_AFFINITY,
                    (
                        {
                            "term": t.describe() if descs is None else descs[i],
                            "domain": f"{t.topology_key}={value}",
                            "matchingPods": n,
                            "pods": list(s.anti_counts.witnesses.get(pair, [])),
                        },
                    ),
                )
    return None


def _existing_anti_status(s: PreFilterState, labels: Mapping[str, str]) -> Status:
    """satisfyExistingPodsAntiAffinity: the first of the node's label pairs an existing pod's required
    anti-affinity term counts, in the node's label order; else Success."""
    if s.existing_anti_counts:
        for pair in labels.items():
            if s.existing_anti_counts.get(pair) > 0:
                return Status(
                    Code.UNSCHEDULABLE,
                    (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,),
                    names.INTER_POD_AFFINITY,
                    (
                        {
                            "domain": f"{pair[0]}={pair[1]}",
                            "podsWithAntiAffinity": list(s.existing_anti_counts.witnesses.get(pair, [])),
                        },
                    ),
                )
    return SUCCESS


def _affinity_status(why: dict[str, Any]) -> Status:
    """satisfyPodAffinity's rejection, named (as every rejection of this plugin)."""
    return Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (ERR_REASON_AFFINITY_RULES_NOT_MATCH,),
        names.INTER_POD_AFFINITY,
        (why,),
    )


def filter_node(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
    s = _state(state)
    if s is None:
        return Status.error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    labels = node_info.node.labels
    why = _affinity_failure(s, labels)
    if why is not None:
        return _affinity_status(why)
    own = _own_anti_failure(s, labels)
    if own is not None:
        return own
    return _existing_anti_status(s, labels)


_UNSET = Status(reasons=("unset",))  # a memo's "not computed yet" (never a verdict)


_DomainKey = tuple[str | None, ...] | str | None  # the value of one term's key, or of each term's


class _Judge:
    """filter_node's verdict for one PreFilterState over many nodes (filter_nodes), with the same Status
    content. satisfyPodAffinity's answer depends on a node only through the values of the affinity terms'
    topology keys (missing or not, and the counts of those pairs), and satisfyPodAntiAffinity's only through
    the values of the anti-affinity terms' keys: each of those rejections is built once per distinct tuple
    of values (one Status object then shared by the nodes of that domain: their report entries are equal)
    instead of once per node (its term description and example-pod list are what the reports read).
    satisfyExistingPodsAntiAffinity depends on the node's label order: judged per node."""

    __slots__ = ("aff_keys", "aff_memo", "anti_descs", "anti_keys", "anti_memo", "s")

    def __init__(self, s: PreFilterState) -> None:
        self.s = s
        self.aff_keys = [t.topology_key for t in s.affinity]
        self.anti_keys = [t.topology_key for t in s.anti_affinity] if s.anti_counts else []
        # A hostname term's domains are single nodes: the memo rarely shares, the term's text still does.
        self.anti_descs = [t.describe() for t in s.anti_affinity] if s.anti_counts else []
        self.aff_memo: dict[_DomainKey, Status | None] = {}
        self.anti_memo: dict[_DomainKey, Status | None] = {}

    def __call__(self, labels: Mapping[str, str]) -> Status:
        s = self.s
        key: _DomainKey
        if self.aff_keys:
            keys = self.aff_keys
            # One term (the common case): its value is the key. A tuple per node costs more than the
            # memo saves: unlike a str, a tuple's hash is computed again at every lookup.
            key = labels.get(keys[0]) if len(keys) == 1 else tuple(map(labels.get, keys))
            st = self.aff_memo.get(key, _UNSET)
            if st is _UNSET:
                why = _affinity_failure(s, labels)
                st = self.aff_memo[key] = None if why is None else _affinity_status(why)
            if st is not None:
                return st
        if self.anti_keys:
            keys = self.anti_keys
            key = labels.get(keys[0]) if len(keys) == 1 else tuple(map(labels.get, keys))
            st = self.anti_memo.get(key, _UNSET)
            if st is _UNSET:
                st = self.anti_memo[key] = _own_anti_failure(s, labels, self.anti_descs)
            if st is not None:
                return st
        return _existing_anti_status(s, labels)


# Off: filter_nodes judges every node with filter_node (tests compare the two).
MEMO_FILTER = True


def filter_nodes(state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
    """`filter_node` per node, in one loop: without required affinity terms a node passes unless one of
    the pod's anti-affinity terms or an existing pod's anti-affinity term counts a pod in the node's
    domain (the pairs `filter_node` tests); such a node, and every node of a pod with required affinity,
    is judged by `_Judge` (filter_node's Status, built once per domain)."""
    s = _state(state)
    if s is None or not MEMO_FILTER:
        return [filter_node(state, pod, ni) for ni in nodes]
    judge = _Judge(s)
    if s.affinity:
        return [judge(ni.node.labels) for ni in nodes]
    anti = s.anti_counts.counts
    anti_keys = [t.topology_key for t in s.anti_affinity] if anti else []
    existing = [pair for pair, n in s.existing_anti_counts.counts.items() if n > 0]
    out: list[Status] = []
    append = out.append
    for ni in nodes:
        labels = ni.node.labels
        hit = False
        for key in anti_keys:
            value = labels.get(key)
            if value is not None and anti.get((key, value), 0) > 0:
                hit = True
                break
        if not hit and existing:
            if len(existing) <= len(labels):
                hit = any(labels.get(k) == v for k, v in existing)
            else:
                counts = s.existing_anti_counts.counts
                hit = any(counts.get(pair, 0) > 0 for pair in labels.items())
        append(judge(labels) if hit else SUCCESS)
    return out


def update_with_pod(
    pl: InterPodAffinity, state: CycleState, other: Pod, node_info: NodeInfo, delta: int
) -> Status:
    s = _state(state)
    if s is None:
        return Status.error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    s.update_with_pod(pl.snapshot, other, node_info.node, delta)
    return SUCCESS
