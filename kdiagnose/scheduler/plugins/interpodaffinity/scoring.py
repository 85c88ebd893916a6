"""InterPodAffinity PreScore/Score/NormalizeScore (plugins/interpodaffinity/scoring.go).

PreScore sums, per (topologyKey, value) of each existing pod's node: the incoming pod's preferred
(anti-)affinity weights the existing pod matches, hardPodAffinityWeight per required affinity term of the
existing pod matching the incoming pod, and the existing pod's preferred (anti-)affinity weights.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import MAX_NODE_SCORE, SKIP, SUCCESS, CycleState, Status
from kdiagnose.scheduler.plugins.interpodaffinity.filtering import _candidate_pods
from kdiagnose.scheduler.plugins.interpodaffinity.terms import (
    AffinityTerm,
    merge_namespaces,
    pod_terms,
    terms_of,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kdiagnose.model.objects import Node, Pod
    from kdiagnose.model.snapshot import NodeInfo
    from kdiagnose.scheduler.plugins.interpodaffinity.plugin import InterPodAffinity

__all__ = ["PRE_SCORE_STATE_KEY", "PreScoreState", "normalize_score", "pre_score", "score"]

PRE_SCORE_STATE_KEY = "PreScore" + names.INTER_POD_AFFINITY


class PreScoreState:
    """preScoreState.topologyScore: topologyKey -> value -> summed weight."""

    __slots__ = ("topology_score", "touched")

    def __init__(self) -> None:
        self.topology_score: dict[str, dict[str, int]] = {}
        self.touched = False

    def process_term(
        self,
        term: AffinityTerm,
        weight: int,
        pod: Pod,
        ns_labels: Mapping[str, str] | None,
        node: Node,
        sign: int,
    ) -> None:
        if term.matches(pod, ns_labels):
            value = node.labels.get(term.topology_key)
            if value is not None:
                per_key = self.topology_score.setdefault(term.topology_key, {})
                per_key[value] = per_key.get(value, 0) + weight * sign
                self.touched = True

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore, as upstream


def pre_score(pl: InterPodAffinity, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
    snapshot = pl.snapshot
    terms = pod_terms(pod)
    has_constraints = bool(terms.preferred_affinity or terms.preferred_anti_affinity)
    if pl.ignore_preferred_terms_of_existing_pods and not has_constraints:
        return SKIP
    preferred = tuple(merge_namespaces(snapshot, t) for t in terms.preferred_affinity)
    preferred_anti = tuple(merge_namespaces(snapshot, t) for t in terms.preferred_anti_affinity)
    ns_labels = snapshot.namespace_labels(pod.namespace)
    hard_weight = pl.hard_pod_affinity_weight
    s = PreScoreState()

    # The incoming pod's preferred terms against every existing pod they could match (upstream scans all
    # pods of all nodes when the pod has preferred terms; pods in other namespaces never match them).
    if has_constraints:
        for existing, ni in _candidate_pods(snapshot, preferred + preferred_anti):
            node = ni.node
            if not node.labels:
                continue
            for t in preferred:
                s.process_term(t, t.weight, existing, None, node, 1)
            for t in preferred_anti:
                s.process_term(t, t.weight, existing, None, node, -1)

    # Existing pods' own terms: only pods with (anti-)affinity can contribute.
    for ni in snapshot.node_infos:
        node = ni.node
        if not ni.pods_with_affinity or not node.labels:
            continue
        for existing in ni.pods_with_affinity:
            et = terms_of(snapshot, existing)
            if hard_weight > 0:
                for t in et.required_affinity:
                    s.process_term(t, hard_weight, pod, ns_labels, node, 1)
            for t in et.preferred_affinity:
                s.process_term(t, t.weight, pod, ns_labels, node, 1)
            for t in et.preferred_anti_affinity:
                s.process_term(t, t.weight, pod, ns_labels, node, -1)

    if not s.touched:
        return SKIP
    state.write(PRE_SCORE_STATE_KEY, s)
    return SUCCESS


def _state(state: CycleState) -> PreScoreState | None:
    s = state.read(PRE_SCORE_STATE_KEY)
    return s if isinstance(s, PreScoreState) else None


def score(state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
    s = _state(state)
    if s is None:
        return 0, Status.error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    labels = node_info.node.labels
    total = 0
    for key, values in s.topology_score.items():
        value = labels.get(key)
        if value is not None:
            total += values.get(value, 0)
    return total, SUCCESS


def normalize_score(state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
    """Min-max scaling in float64, truncated: 100·(s − min)/(max − min); all equal gives 0."""
    s = _state(state)
    if s is None:
        return Status.error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    if not s.topology_score or not scores:
        return SUCCESS
    lo = min(scores.values())
    hi = max(scores.values())
    diff = hi - lo
    for name, v in scores.items():
        f = float(MAX_NODE_SCORE) * (float(v - lo) / float(diff)) if diff > 0 else 0.0
        scores[name] = int(f)
    return SUCCESS
