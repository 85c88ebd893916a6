"""NodeAffinity: nodeSelector AND required node affinity filter, preferred terms score
(plugins/nodeaffinity/node_affinity.go over component-helpers/scheduling/corev1/nodeaffinity)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    CycleState,
    Handle,
    Plugin,
    PreFilterResult,
    Status,
)
from kdiagnose.scheduler.plugins.helper.node_selector import (
    OBJECT_NAME_FIELD,
    NodeSelectorTerm,
    RequiredNodeSelector,
    label_keys,
    parse_node_selector_terms,
    parse_preferred_terms,
)
from kdiagnose.scheduler.plugins.helper.normalize_score import default_normalize_score

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node, Pod
    from kdiagnose.model.snapshot import NodeInfo

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NodeAffinity",
    "prefilter_node_names",
]

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_PRE_FILTER_KEY = "PreFilter" + names.NODE_AFFINITY
_PRE_SCORE_KEY = "PreScore" + names.NODE_AFFINITY


def _required_raw(pod: Pod) -> dict[str, Any] | None:
    na = pod.affinity.get("nodeAffinity") if pod.affinity else None
    if not isinstance(na, dict):
        return None
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    return req if isinstance(req, dict) else None


def prefilter_node_names(terms: list[Any]) -> frozenset[str] | None:
    """The nodes named by `matchFields metadata.name In` in every term (unioned over terms), or None when
    some term names none (then any node may match). Empty terms count as naming none, as upstream."""
    node_names: set[str] | None = None
    for t in terms:
        t = t if isinstance(t, dict) else {}
        term_names: set[str] | None = None
        for r in t.get("matchFields") or ():
            if not isinstance(r, dict):
                continue
            if r.get("key") == OBJECT_NAME_FIELD and r.get("operator") == "In":
                vals = {str(v) for v in r.get("values") or ()}
                term_names = vals if term_names is None else term_names & vals
        if term_names is None:
            return None
        node_names = term_names if node_names is None else node_names | term_names
    return None if node_names is None else frozenset(node_names)


def _score_terms(terms: list[tuple[NodeSelectorTerm, int]], node: Node) -> int:
    return sum(w for t, w in terms if t.match(node))


class NodeAffinity(Plugin):
    name = names.NODE_AFFINITY

    def __init__(self, handle: Handle) -> None:
        super().__init__(handle)
        # NodeAffinityArgs.addedAffinity: a profile-wide node affinity added to every pod.
        added = handle.args.get("addedAffinity") or {}
        added = added if isinstance(added, dict) else {}
        req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.added_terms: list[NodeSelectorTerm] | None = (
            parse_node_selector_terms(req.get("nodeSelectorTerms")) if isinstance(req, dict) else None
        )
        pref = added.get("preferredDuringSchedulingIgnoredDuringExecution")
        self.added_pref: list[tuple[NodeSelectorTerm, int]] | None = (
            parse_preferred_terms(pref) if pref else None
        )

    def _added_match(self, node: Node) -> bool:
        return self.added_terms is None or any(t.match(node) for t in self.added_terms)

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        req = _required_raw(pod)
        if req is None and self.added_terms is None and not pod.node_selector:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, RequiredNodeSelector.of(pod.node_selector, pod.affinity))
        terms = req.get("nodeSelectorTerms") if req is not None else None
        if not isinstance(terms, list) or not terms:
            return None, SUCCESS
        node_names = prefilter_node_names(terms)
        if node_names is None:
            return None, SUCCESS
        if not node_names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        return PreFilterResult(node_names), SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if not self._added_match(node):
            return Status.unresolvable(ERR_REASON_ENFORCED, details=({"addedAffinity": "not matched"},))
        sel: RequiredNodeSelector | None = state.read(_PRE_FILTER_KEY)
        if sel is None:
            sel = RequiredNodeSelector.of(pod.node_selector, pod.affinity)
        if sel.match(node):
            return SUCCESS
        return Status.unresolvable(ERR_REASON_POD, details=(sel.failing(node),))

    def filter_many(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
        # Without matchFields the verdict (and its details) is a function of the values of the label keys
        # the selectors name: decided once per distinct tuple of values, shared by the nodes that have it.
        sel: RequiredNodeSelector | None = state.read(_PRE_FILTER_KEY)
        if sel is None:
            sel = RequiredNodeSelector.of(pod.node_selector, pod.affinity)
        keys = label_keys(sel, self.added_terms)
        if keys is None:
            return super().filter_many(state, pod, nodes)
        memo: dict[tuple[str | None, ...], Status] = {}
        out: list[Status] = []
        if len(keys) == 1:
            # One key (a nodeSelector or one term's expression): its value is the class, no tuple per node.
            (k,) = keys
            by_value: dict[str | None, Status] = {}
            for ni in nodes:
                v = ni.node.labels.get(k)
                st = by_value.get(v)
                if st is None:
                    st = by_value[v] = self.filter(state, pod, ni)
                out.append(st)
            return out
        for ni in nodes:
            labels = ni.node.labels
            key = tuple([labels.get(k) for k in keys])
            st = memo.get(key)
            if st is None:
                st = memo[key] = self.filter(state, pod, ni)
            out.append(st)
        return out

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        na = pod.affinity.get("nodeAffinity") if pod.affinity else None
        raw = na.get("preferredDuringSchedulingIgnoredDuringExecution") if isinstance(na, dict) else None
        # An empty list does not survive the API server's omitempty encoding, so it reads as nil here.
        if not raw and self.added_pref is None:
            return SKIP
        state.write(_PRE_SCORE_KEY, parse_preferred_terms(raw) if raw else [])
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        node = node_info.node
        count = _score_terms(self.added_pref, node) if self.added_pref else 0
        terms: list[tuple[NodeSelectorTerm, int]] | None = state.read(_PRE_SCORE_KEY)
        if terms is None:
            na = pod.affinity.get("nodeAffinity") if pod.affinity else None
            terms = (
                parse_preferred_terms(na.get("preferredDuringSchedulingIgnoredDuringExecution"))
                if isinstance(na, dict)
                else []
            )
        return count + _score_terms(terms, node), SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return SUCCESS
