"""PodTopologySpread PreScore/Score/NormalizeScore for ScheduleAnyway and default constraints
(plugins/podtopologyspread/scoring.go)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import MAX_NODE_SCORE, SKIP, SUCCESS, CycleState, Status, add_note
from kdiagnose.scheduler.plugins.helper.node_selector import RequiredNodeSelector
from kdiagnose.scheduler.plugins.helper.spread import workload_kinds_missing
from kdiagnose.scheduler.plugins.podtopologyspread.common import (
    LABEL_HOSTNAME,
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    node_has_all_keys,
)
from kdiagnose.scheduler.plugins.podtopologyspread.filtering import spread_candidates

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo
    from kdiagnose.scheduler.plugins.podtopologyspread.plugin import PodTopologySpread

__all__ = [
    "PRE_SCORE_STATE_KEY",
    "PreScoreState",
    "go_round",
    "normalize_score",
    "pre_score",
    "score",
    "score_for_count",
    "topology_normalizing_weight",
]

PRE_SCORE_STATE_KEY = "PreScore" + names.POD_TOPOLOGY_SPREAD


class PreScoreState:
    """preScoreState: constraints, ignored nodes, matching pods per topology value (non-hostname keys),
    per-node matching pods (hostname keys) and each constraint's normalizing weight."""

    __slots__ = ("constraints", "host_counts", "ignored", "topology_counts", "weights")

    def __init__(self, constraints: list[SpreadConstraint]) -> None:
        self.constraints = constraints
        self.ignored: set[str] = set()
        self.topology_counts: list[dict[str, int]] = [{} for _ in constraints]
        self.host_counts: list[dict[str, int]] = [{} for _ in constraints]
        self.weights: list[float] = []

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore, as upstream


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def score_for_count(cnt: int, max_skew: int, weight: float) -> float:
    # maxSkew-1 waters down the differences between domains, controlling the tolerance to skew.
    return float(cnt) * weight + float(max_skew - 1)


def go_round(x: float) -> int:
    """math.Round: half away from zero (Python's round() is half-to-even)."""
    f = math.floor(x)
    return int(f + 1) if x - f >= 0.5 else int(f)


def pre_score(pl: PodTopologySpread, state: CycleState, pod: Pod, filtered: list[NodeInfo]) -> Status:
    snapshot = pl.snapshot
    if not snapshot.node_infos:
        return SKIP
    # Only non-system-default rules require every key on a node: nodes without a zone label still get
    # hostname spreading under the System defaults.
    require_all = bool(pod.topology_spread_constraints) or not pl.system_defaulted
    constraints = pl.constraints_for(pod, SCHEDULE_ANYWAY)
    if not pod.topology_spread_constraints and pl.default_constraints:
        missing = workload_kinds_missing(snapshot, pod)
        if missing:
            add_note(
                state,
                "not checked: the input has no "
                + ", ".join(missing)
                + " objects; default topology spreading "
                "(PodTopologySpread score) may select more pods in the real cluster",
            )
    if not constraints:
        return SKIP
    s = PreScoreState(constraints)
    topo_size = [0] * len(constraints)
    for ni in filtered:
        labels = ni.node.labels
        if require_all and not node_has_all_keys(labels, constraints):
            s.ignored.add(ni.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == LABEL_HOSTNAME:
                continue  # per-node counts are taken at Score
            # A missing key reads as "" and still forms a domain for the weight (upstream map lookup).
            value = labels.get(c.topology_key, "")
            if value not in s.topology_counts[i]:
                s.topology_counts[i][value] = 0
                topo_size[i] += 1
    for i, c in enumerate(constraints):
        size = len(filtered) - len(s.ignored) if c.topology_key == LABEL_HOSTNAME else topo_size[i]
        s.weights.append(topology_normalizing_weight(size))

    required = RequiredNodeSelector.of(pod.node_selector, pod.affinity)
    node_domain: list[dict[str, str]] = [{} for _ in constraints]
    zonal = [i for i, c in enumerate(constraints) if c.topology_key != LABEL_HOSTNAME]
    if zonal:
        for ni in snapshot.node_infos:
            node = ni.node
            if require_all and not node_has_all_keys(node.labels, constraints):
                continue
            for i in zonal:
                c = constraints[i]
                if not c.include_node(pod, node, required):
                    continue
                value = node.labels.get(c.topology_key, "")
                # Only domains of candidate nodes are counted.
                if value in s.topology_counts[i]:
                    node_domain[i][ni.name] = value
    active = [i for i, c in enumerate(constraints) if not c.counts_nothing]
    if active:
        for other, ni in spread_candidates(snapshot, pod.namespace, [constraints[i] for i in active]):
            if other.deletion_timestamp is not None:
                continue
            for i in active:
                c = constraints[i]
                if c.topology_key == LABEL_HOSTNAME:
                    if c.matches(other.labels):
                        s.host_counts[i][ni.name] = s.host_counts[i].get(ni.name, 0) + 1
                    continue
                domain = node_domain[i].get(ni.name)
                if domain is not None and c.matches(other.labels):
                    s.topology_counts[i][domain] += 1
    state.write(PRE_SCORE_STATE_KEY, s)
    return SUCCESS


def _state(state: CycleState) -> PreScoreState | None:
    s = state.read(PRE_SCORE_STATE_KEY)
    return s if isinstance(s, PreScoreState) else None


def score(state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
    s = _state(state)
    if s is None:
        return 0, Status.error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    name = node_info.name
    if name in s.ignored:
        return 0, SUCCESS
    labels = node_info.node.labels
    total = 0.0
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == LABEL_HOSTNAME:
            cnt = s.host_counts[i].get(name, 0)
        else:
            cnt = s.topology_counts[i].get(value, 0)
        total += score_for_count(cnt, c.max_skew, s.weights[i])
    return go_round(total), SUCCESS


def normalize_score(state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
    """Fewer matching pods score higher: 100·(max + min − s)/max over the nodes not ignored; ignored get 0."""
    s = _state(state)
    if s is None:
        return Status.error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    min_score: int | None = None
    max_score = 0
    for name, v in scores.items():
        if name in s.ignored:
            continue
        if min_score is None or v < min_score:
            min_score = v
        if v > max_score:
            max_score = v
    for name, v in scores.items():
        if name in s.ignored:
            scores[name] = 0
        elif max_score == 0:
            scores[name] = MAX_NODE_SCORE
        else:
            # Operands are non-negative, so floor division equals Go's truncating int64 division.
            scores[name] = MAX_NODE_SCORE * (max_score + (min_score or 0) - v) // max_score
    return SUCCESS
