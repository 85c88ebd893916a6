"""DefaultPreemption PostFilter (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go).

The plugin supplies eligibility, victim selection and the candidate count to the Evaluator
(kdiagnose/scheduler/preemption.py) and prefixes its message with `preemption: `. Victims are reported
in `Diagnosis.preemption`, never deleted. The dry-run offset is 0 instead of upstream's rand.Int31n, so
replays are reproducible; with fewer than 100 candidate nodes (minCandidateNodesAbsolute) every node is
tried anyway and the offset cannot change the outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SUCCESS, Code, CycleState, Plugin, Status, add_note
from kdiagnose.scheduler.preemption import (
    PDB,
    Evaluator,
    filter_pods_with_pdb_violation,
    sort_by_importance,
)

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.runner import Framework

__all__ = [
    "ERR_NOT_ELIGIBLE_NEVER",
    "ERR_NOT_ELIGIBLE_TERMINATING",
    "ERR_NO_VICTIMS",
    "MESSAGE_PREFIX",
    "DefaultPreemption",
    "pod_terminating_by_preemption",
]

MESSAGE_PREFIX = "preemption: "
ERR_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
ERR_NO_VICTIMS = "No preemption victims found for incoming pod"
# One shared (frozen) Status for the nodes without a lower-priority pod.
_NO_VICTIMS = Status.unresolvable(ERR_NO_VICTIMS)

# Built in: the API server creates them, so a dump need not contain them (pkg/apis/scheduling/types.go).
_SYSTEM_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")

# DefaultPreemptionArgs defaults (pkg/scheduler/apis/config/v1/defaults.go).
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


def _int_arg(args: dict[str, Any], key: str, default: int) -> int:
    v = args.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """podTerminatingByPreemption: deleting, and its first DisruptionTarget condition says the scheduler
    preempted it."""
    if pod.deletion_timestamp is None:
        return False
    for c in pod.conditions:
        if c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False


class DefaultPreemption(Plugin):
    name = names.DEFAULT_PREEMPTION

    @property
    def min_candidate_nodes_percentage(self) -> int:
        return _int_arg(
            self.handle.args, "minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
        )

    @property
    def min_candidate_nodes_absolute(self) -> int:
        return _int_arg(self.handle.args, "minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)

    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis, framework: Framework) -> Status:
        status = Evaluator(self, framework).preempt(state, pod, diagnosis)
        self._note_missing_inputs(state, pod, diagnosis, status)
        if status.message:
            return Status(status.code, (MESSAGE_PREFIX + status.message,), status.plugin, status.details)
        return status

    def _note_missing_inputs(self, state: CycleState, pod: Pod, diagnosis: Diagnosis, status: Status) -> None:
        """Preemption reads PriorityClasses (through the priorities admission resolved) and PDBs: say when
        the input had none, rather than let "no PDB" pass for "no PDB protects the victims"."""
        if pod.preemption_policy == "Never" or ERR_NOT_ELIGIBLE_TERMINATING in status.message:
            return
        snap = self.snapshot
        if diagnosis.preemption is not None and not snap.has("PodDisruptionBudget"):
            add_note(
                state,
                "not checked: the input has no PodDisruptionBudgets; preemption chose its victims as if "
                "no PDB protected them",
            )
        # Priorities only decide anything on nodes where some victims were tried.
        if diagnosis.preemption is None and ERR_NO_VICTIMS not in status.message:
            return
        pc = pod.priority_class_name
        if pc and pc not in _SYSTEM_PRIORITY_CLASSES and snap.get("PriorityClass", pc) is None:
            add_note(
                state,
                f"not checked: PriorityClass {pc} is not in the input; preemption used the pod's "
                f"spec.priority ({pod.priority})",
            )
        elif not snap.has("PriorityClass"):
            add_note(
                state,
                "not checked: the input has no PriorityClasses; preemption used the pods' spec.priority "
                "as given (0 when unset)",
            )

    # ------------------------------------------------------------ preemption.Interface

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """max(numNodes * percentage / 100, absolute), capped at numNodes (int32 arithmetic)."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        # Upstream: rand.Int31n(numNodes). 0 makes the replay deterministic.
        return 0, self.calculate_num_candidates(num_nodes)

    def is_preemption_allowed(self, victim: Pod, preemptor: Pod) -> bool:
        """Only strictly lower-priority pods may be evicted (IsEligiblePod is `true` by default)."""
        return victim.priority < preemptor.priority

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        if pod.preemption_policy == "Never":
            return False, ERR_NOT_ELIGIBLE_NEVER
        nom = pod.nominated_node_name
        if nom:
            # A nominated node the filters now call unresolvable is no reason to wait: preempt again.
            if (
                nominated_node_status is not None
                and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            ni = self.snapshot.node_info_by_name.get(nom)
            if ni is not None:
                for p in ni.pods:
                    if self.is_preemption_allowed(p, pod) and pod_terminating_by_preemption(p):
                        return False, ERR_NOT_ELIGIBLE_TERMINATING
        return True, ""

    def select_victims_on_node(
        self, framework: Framework, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PDB]
    ) -> tuple[list[Pod], int, Status]:
        """SelectVictimsOnNode on copies of `node_info` and `state`.

        Upstream copies both before calling; here the copies are made only once there is a pod to remove,
        which cannot change the outcome (nothing is mutated otherwise) and keeps the common "nothing of
        lower priority" case cheap on big clusters.
        """
        if type(self).is_preemption_allowed is DefaultPreemption.is_preemption_allowed:
            # is_preemption_allowed inlined: the scan runs over every pod of every potential node.
            priority = pod.priority
            lowest = node_info.lowest_priority
            if lowest is None:
                # No pod: above any int32 priority.
                lowest = node_info.lowest_priority = min(
                    (p.priority for p in node_info.pods), default=1 << 31
                )
            if lowest >= priority:  # the node's pods are kept until one is added or removed: no scan
                return [], 0, _NO_VICTIMS
            potential = [p for p in node_info.pods if p.priority < priority]
        else:
            potential = [p for p in node_info.pods if self.is_preemption_allowed(p, pod)]
        if not potential:
            return [], 0, _NO_VICTIMS
        ni = node_info.clone()
        st = state.clone()

        # Remove every eligible pod, running the PreFilter extensions so PreFilter state follows.
        for p in potential:
            ni.remove_pod(p)
            s = framework.run_remove_pod(st, pod, p, ni)
            if not s.ok:
                return [], 0, Status.error(s.message)
        # Still not fitting without any of them: this node cannot help; its filter status says why.
        s = framework.run_filters_with_nominated(st, pod, ni)
        if not s.ok:
            return [], 0, s

        # v1.37 stamps each victim's missing start time once, in the node's pod order (preemption.NewVictim).
        created = (
            {p.key: i for i, p in enumerate(potential)} if self.dialect.victim_start_time_stamped else None
        )
        potential = sort_by_importance(potential, created)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[Pod] = []

        def reprieve(p: Pod) -> tuple[bool, Status]:
            """Put the pod back; if the preemptor then no longer fits, take it out again as a victim."""
            ni.add_pod(p)
            s = framework.run_add_pod(st, pod, p, ni)
            if not s.ok:
                return False, Status.error(s.message)
            fits = framework.run_filters_with_nominated(st, pod, ni).ok
            if not fits:
                ni.remove_pod(p)
                s = framework.run_remove_pod(st, pod, p, ni)
                if not s.ok:
                    return False, Status.error(s.message)
                victims.append(p)
            return fits, SUCCESS

        num_violating = 0
        # PDB-violating pods are reprieved first, then the others; each group most important first.
        for p in violating:
            fits, s = reprieve(p)
            if not s.ok:
                return [], 0, s
            if not fits:
                num_violating += 1
        for p in non_violating:
            _, s = reprieve(p)
            if not s.ok:
                return [], 0, s
        if violating and non_violating:
            victims = sort_by_importance(victims, created)
        return victims, num_violating, SUCCESS
