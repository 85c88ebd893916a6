"""The preemption Evaluator (pkg/scheduler/framework/preemption/preemption.go).

`Evaluator.preempt` is Evaluator.Preempt without the API side effects: eligibility, candidate nodes
(status Unschedulable only), a dry run per candidate on cloned NodeInfo/CycleState, then
pickOneNodeForPreemption. The plugin-specific parts (eligibility, victim selection, candidate count)
come from a `PreemptionInterface`, as upstream's `preemption.Interface`.

Deterministic where upstream is random: the dry run starts at offset 0 (upstream: rand.Int31n), goes
through candidate nodes in snapshot order (upstream v1.32+: Go map order), and ties left after every
tie-breaker go to the first candidate in that order (upstream: map order, i.e. random).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from kdiagnose.scheduler.diagnosis import Preemption
from kdiagnose.scheduler.fit_error import fit_error_message
from kdiagnose.scheduler.framework import SUCCESS, Code, CycleState, Status
from kdiagnose.scheduler.gosort import sort_slice

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo, Snapshot
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.runner import Framework

__all__ = [
    "ERR_NOT_HELPFUL",
    "ERR_NO_CANDIDATE",
    "PDB",
    "SUCCESS_MESSAGE",
    "Candidate",
    "Evaluator",
    "PreemptionInterface",
    "aggregate_errors",
    "filter_pods_with_pdb_violation",
    "more_important_pod",
    "more_important_victim",
    "pdbs_of",
    "pick_one_node_for_preemption",
    "sort_by_importance",
    "start_time_key",
]

# Absent (non-candidate) nodes in the nested FitError.
ERR_NOT_HELPFUL = "Preemption is not helpful for scheduling"
ERR_NO_CANDIDATE = "no candidate node for preemption"
# v1.37+: the status of a preemption that found its node (before DefaultPreemption's `preemption: `).
SUCCESS_MESSAGE = "found a potential placement for pod on node {node}, preempting {victims} victims"

# int64(math.MaxInt32+1): added to every victim priority so negative priorities sum sensibly.
_PRIORITY_OFFSET = 2**31
_PDB_CACHE_KEY = "preemption/pdbs"


# ---------------------------------------------------------------- ordering (pkg/scheduler/util/utils.go)


@cache
def _parse_time(value: str) -> float:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return math.inf


def start_time_key(pod: Pod) -> float:
    """GetPodStartTime: status.startTime, or "now" (later than every real start) when it is unset."""
    return _parse_time(pod.start_time) if pod.start_time else math.inf


def more_important_pod(a: Pod, b: Pod) -> bool:
    """util.MoreImportantPod: higher priority, then earlier start time.

    A pod without startTime counts as started "now"; upstream calls time.Now() for a then for b, so of two
    such pods the first argument is always the earlier (more important) one.
    """
    if a.priority != b.priority:
        return a.priority > b.priority
    if not a.start_time and not b.start_time:
        return True
    return start_time_key(a) < start_time_key(b)


def more_important_victim(a: Pod, b: Pod, created: Mapping[str, int]) -> bool:
    """preemption.MoreImportantVictim (v1.37, framework/preemption/util.go) for single-pod victims: higher
    priority, then the earlier EarliestStartTime. A pod without startTime gets time.Now() once, when its
    Victim is made (types.go NewVictim, in the node's pod order: `created`), so of two such pods the one
    earlier on the node is the more important; v1.36 and older call time.Now() at each comparison."""
    if a.priority != b.priority:
        return a.priority > b.priority
    if not a.start_time and not b.start_time:
        return created[a.key] < created[b.key]
    return start_time_key(a) < start_time_key(b)


def sort_by_importance(pods: Sequence[Pod], created: Mapping[str, int] | None = None) -> list[Pod]:
    """sort.Slice(pods, MoreImportantPod), most important first: Go's unstable pdqsort, mirrored exactly
    (scheduler/gosort.py), so equal pods keep the order the real scheduler gives them and the same ones
    are reprieved. With `created` (each pod's position among the node's victims), MoreImportantVictim."""
    out = list(pods)
    if created is None:
        sort_slice(out, more_important_pod)
    else:
        sort_slice(out, lambda a, b: more_important_victim(a, b, created))
    return out


# ---------------------------------------------------------------- PodDisruptionBudgets


Matcher = Callable[[dict[str, str]], bool]


def _requirement(expr: Any) -> Matcher | None:
    """One matchExpressions entry; None when invalid (LabelSelectorAsSelector would fail)."""
    if not isinstance(expr, dict):
        return None
    key = str(expr.get("key") or "")
    op = expr.get("operator")
    raw_values = expr.get("values") or []
    if not key or not isinstance(raw_values, list):
        return None
    values = frozenset(str(v) for v in raw_values)
    if op == "In" and values:
        return lambda labels: key in labels and labels[key] in values
    if op == "NotIn" and values:
        return lambda labels: key not in labels or labels[key] not in values
    if op == "Exists" and not values:
        return lambda labels: key in labels
    if op == "DoesNotExist" and not values:
        return lambda labels: key not in labels
    return None


def _selector(raw: Any) -> Matcher | None:
    """metav1.LabelSelectorAsSelector; None for a selector that matches nothing here: nil, empty
    (filterPodsWithPDBViolation skips `selector.Empty()`), or invalid."""
    if not isinstance(raw, dict):
        return None
    match_labels = raw.get("matchLabels") or {}
    exprs = raw.get("matchExpressions") or []
    if not isinstance(match_labels, dict) or not isinstance(exprs, list):
        return None
    if not match_labels and not exprs:
        return None
    wanted = {str(k): "" if v is None else str(v) for k, v in match_labels.items()}
    reqs: list[Matcher] = []
    for e in exprs:
        r = _requirement(e)
        if r is None:
            return None
        reqs.append(r)

    def matches(labels: dict[str, str]) -> bool:
        for k, v in wanted.items():
            if labels.get(k) != v:
                return False
        return all(r(labels) for r in reqs)

    return matches


@dataclass(frozen=True, slots=True)
class PDB:
    """What preemption reads of a PodDisruptionBudget."""

    namespace: str
    name: str
    matches: Matcher | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    @staticmethod
    def from_obj(obj: dict[str, Any]) -> PDB:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        allowed = status.get("disruptionsAllowed")
        disrupted = status.get("disruptedPods")
        return PDB(
            namespace=str(meta.get("namespace") or "default"),
            name=str(meta.get("name") or ""),
            matches=_selector(spec.get("selector")),
            disruptions_allowed=int(allowed)
            if isinstance(allowed, int) and not isinstance(allowed, bool)
            else 0,
            disrupted_pods=frozenset(str(k) for k in disrupted)
            if isinstance(disrupted, dict)
            else frozenset(),
        )


def pdbs_of(snapshot: Snapshot) -> list[PDB]:
    """Every PDB of the snapshot, parsed once per snapshot."""
    cached: list[PDB] | None = snapshot.cache.get(_PDB_CACHE_KEY)
    if cached is None:
        cached = [PDB.from_obj(o) for o in snapshot.kind("PodDisruptionBudget")]
        snapshot.cache[_PDB_CACHE_KEY] = cached
    return cached


def filter_pods_with_pdb_violation(pods: Sequence[Pod], pdbs: Sequence[PDB]) -> tuple[list[Pod], list[Pod]]:
    """filterPodsWithPDBViolation (default_preemption.go): (violating, non-violating), order kept.

    Every matching PDB not already listing the pod in disruptedPods loses one allowed disruption; the pod
    violates when any of them goes below zero.
    """
    allowed = [p.disruptions_allowed for p in pdbs]
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace or pdb.matches is None or not pdb.matches(pod.labels):
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


# ---------------------------------------------------------------- candidates


@dataclass(slots=True)
class Candidate:
    """A node where the pod fits once `victims` (most important first) are evicted."""

    name: str
    victims: list[Pod]
    num_pdb_violations: int = 0


def _earliest_top_priority_start(victims: Sequence[Pod]) -> float:
    """util.GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    best = start_time_key(victims[0])
    top = victims[0].priority
    for p in victims:
        if p.priority == top:
            best = min(best, start_time_key(p))
        elif p.priority > top:
            top = p.priority
            best = start_time_key(p)
    return best


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> Candidate | None:
    """pickOneNodeForPreemption with the default score functions; each one keeps its best-scoring nodes and
    the next breaks the tie. Left-over ties go to the first candidate in the given order."""
    if not candidates:
        return None
    score_funcs: list[Callable[[Candidate], float]] = [
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(p.priority + _PRIORITY_OFFSET for p in c.victims),
        lambda c: -len(c.victims),
        _latest_start_score,
    ]
    remaining = list(candidates)
    for f in score_funcs:
        scores = [f(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores, strict=True) if s == best]
        if len(remaining) == 1:
            return remaining[0]
    return remaining[0]


def _latest_start_score(c: Candidate) -> float:
    return _earliest_top_priority_start(c.victims)


def aggregate_errors(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message as is, several de-duplicated in `[a, b]`."""
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


# ---------------------------------------------------------------- the Evaluator


class PreemptionInterface(Protocol):
    """preemption.Interface: what a preemption plugin supplies to the Evaluator."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self, framework: Framework, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PDB]
    ) -> tuple[list[Pod], int, Status]: ...


class Evaluator:
    """Evaluator.Preempt for one plugin; no API calls (victims are reported, not deleted)."""

    def __init__(self, plugin: PreemptionInterface, framework: Framework) -> None:
        self.plugin = plugin
        self.framework = framework

    def _status_of(self, d: Diagnosis, node_name: str) -> Status | None:
        """NodeToStatus.Get: the explicit status, else the absent nodes' status (UnschedulableAndUnresolvable
        by default). v1.31 had a plain map, where a missing node reads as a nil (Success) status."""
        st = d.verdicts.get(node_name)
        if st is not None:
            return st
        if not self.framework.dialect.absent_nodes_counted:
            return None
        return d.absent if d.absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def preempt(self, state: CycleState, pod: Pod, d: Diagnosis) -> Status:
        """Success sets `d.preemption`; otherwise the status whose message follows `preemption: `."""
        fw = self.framework
        snapshot = fw.snapshot
        nominated_status = self._status_of(d, pod.nominated_node_name) if pod.nominated_node_name else None
        ok, msg = self.plugin.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            return Status(Code.UNSCHEDULABLE, (msg,))

        all_nodes = snapshot.node_infos
        if not all_nodes:
            return Status.error("no nodes available")
        # findCandidates: only nodes whose filter status is Unschedulable may be helped by evicting pods.
        potential = self.nodes_for_status_code(d, Code.UNSCHEDULABLE)
        candidates: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        if potential:
            offset, num_candidates = self.plugin.get_offset_and_num_candidates(len(potential))
            candidates, statuses, errors = self.dry_run_preemption(
                state, pod, potential, pdbs_of(snapshot), offset, num_candidates
            )
        if errors and not candidates:
            return Status.error(aggregate_errors(errors))
        if not candidates:
            # A FitError over all nodes: dry-run statuses explicit, every other node "not helpful".
            absent = Status.unresolvable(ERR_NOT_HELPFUL)
            return Status(Code.UNSCHEDULABLE, (fit_error_message(len(all_nodes), statuses, absent=absent),))
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return Status.unschedulable(ERR_NO_CANDIDATE)
        d.preemption = Preemption(best.name, list(best.victims), best.num_pdb_violations)
        if self.framework.dialect.preemption_success_message:
            # v1.37 Evaluator.Preempt (#140180): `%v` node, `%d` victims, never pluralised.
            return Status(Code.SUCCESS, (SUCCESS_MESSAGE.format(node=best.name, victims=len(best.victims)),))
        return SUCCESS

    def nodes_for_status_code(self, d: Diagnosis, code: Code) -> list[NodeInfo]:
        """NodeToStatus.NodesForStatusCode: the snapshot's nodes whose status (explicit, else the absent
        nodes' status) has `code`, in snapshot order."""
        return [
            ni
            for ni in self.framework.snapshot.node_infos
            if (s := self._status_of(d, ni.name)) is not None and s.code == code
        ]

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PDB],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """DryRunPreemption, sequentially: stop once there is a PDB-respecting candidate and `num_candidates`
        in all (upstream cancels its parallel workers at that point). Candidates respecting every PDB come
        first. Each candidate list holds at most `num_candidates`, as upstream's fixed-size candidateList."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        n = len(potential_nodes)
        for i in range(n):
            ni = potential_nodes[(offset + i) % n]
            victims, num_violations, status = self.plugin.select_victims_on_node(
                self.framework, state, pod, ni, pdbs
            )
            if status.ok and victims:
                c = Candidate(ni.name, victims, num_violations)
                target = non_violating if num_violations == 0 else violating
                if len(target) < num_candidates:
                    target.append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if status.ok:
                status = Status.error(f'expected at least one victim pod on node "{ni.name}"')
            if status.code == Code.ERROR:
                errors.append(status.message)
            statuses[ni.name] = status
        return non_violating + violating, statuses, errors

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """SelectCandidate: the only candidate, else pickOneNodeForPreemption."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        return pick_one_node_for_preemption(candidates)
