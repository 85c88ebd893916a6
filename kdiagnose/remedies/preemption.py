"""Preemption: what DefaultPreemption decided (scheduler/preemption.py, default_preemption.go), proven by
replaying the pod with the victims removed; when it cannot preempt, why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.remedies.whatif import Context
from kdiagnose.results import AUTOMATIC, Remedy
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.framework import Code
from kdiagnose.scheduler.preemption import PDB, filter_pods_with_pdb_violation, pdbs_of

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot

__all__ = ["remedies"]


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    d = ctx.d
    pod = ctx.pod
    pre = d.preemption
    if pre is None:
        return [], _why_not(ctx)
    victims = list(pre.victims)
    r = ctx.replay(ctx.snapshot.derive(remove_pods=victims), nodes=[pre.nominated_node])
    if not r.schedules:
        st = r.verdicts.get(pre.nominated_node)
        return [], [
            f"preemption: evicting the victims on {pre.nominated_node} did not make it feasible in the replay ({st.message if st else ''})"
        ]
    pdbs = pdbs_of(ctx.snapshot)
    violating, _ = filter_pods_with_pdb_violation(victims, pdbs)
    bad = {id(v) for v in violating}
    checked = ctx.snapshot.has("PodDisruptionBudget")
    rows = []
    for v in victims:
        # Said per victim in what is known: "within PDB budget" for a pod no PDB covers (or a dump without
        # PDBs) read as if a budget protected it.
        if id(v) in bad:
            effect = "violates its PodDisruptionBudget"
        elif not checked:
            effect = "PodDisruptionBudgets not in the input"
        elif _covered(v, pdbs):
            effect = "its PodDisruptionBudget allows it"
        else:
            effect = "no PodDisruptionBudget"
        rows.append({"pod": v.key, "priority": v.priority, "pdb": effect})
    if not checked:
        pdb_risk = "the input has no PodDisruptionBudgets: whether a victim is protected was not checked"
    elif violating:
        pdb_risk = (
            f"deleting {len(violating)} of the {len(victims)} victim(s) violates their PodDisruptionBudget"
        )
    else:
        pdb_risk = "no victim's PodDisruptionBudget is violated"
    listing = ", ".join(f"{x['pod']} (priority {x['priority']}, {x['pdb']})" for x in rows)
    return [
        Remedy(
            kind="preemption",
            summary=(
                f"the scheduler will preempt {len(victims)} lower-priority pod(s) on {pre.nominated_node} "
                f"and nominate it for {pod.key}: {listing}"
            ),
            plugin=n.DEFAULT_PREEMPTION,
            unblocks=[pre.nominated_node],
            safety=AUTOMATIC,
            change_size=float(len(victims)),
            risk=(
                "the scheduler deletes the victims with their graceful termination period (not through the "
                "eviction API: a PodDisruptionBudget does not stop it); pods with a controller are re-created and "
                f"may themselves stay Pending, bare pods are gone; {pdb_risk}"
            ),
            verify=(
                f"kubectl get pod/{pod.name} -n {pod.namespace} -o jsonpath='{{.status.nominatedNodeName}}'"
                f"  # prints {pre.nominated_node} once the scheduler has preempted"
            ),
            apply_note="nothing to apply: kube-scheduler evicts the victims and nominates the node itself",
            rollback=(
                "# nothing to roll back: to keep the pod from preempting, give it a PriorityClass with "
                "preemptionPolicy: Never"
            ),
            details={"nominated_node": pre.nominated_node, "victims": rows, "pdb_violations": len(violating)},
        )
    ], []


def _covered(pod: Pod, pdbs: list[PDB]) -> bool:
    """A PDB of the pod's namespace selects it (filterPodsWithPDBViolation's match, default_preemption.go)."""
    return bool(pod.labels) and any(
        pdb.namespace == pod.namespace and pdb.matches is not None and pdb.matches(pod.labels) for pdb in pdbs
    )


_LOWEST_KEY = "remedies/preemption:lowest-bound-priority"


def _lowest_priority(snapshot: Snapshot) -> float:
    """The lowest priority of a pod bound to a node (inf for none), once per snapshot: whether any pod is
    below the pending pod's is then one comparison, not a scan of every bound pod per pending pod."""
    low: float | None = snapshot.cache.get(_LOWEST_KEY)
    if low is None:
        low = min((p.priority for ni in snapshot.node_infos for p in ni.pods), default=float("inf"))
        snapshot.cache[_LOWEST_KEY] = low
    return low


def _why_not(ctx: Context) -> list[str]:
    pod = ctx.pod
    d = ctx.d
    if d.num_all_nodes == 0:
        return []  # nothing to preempt on: the report's cause is the missing nodes, not priorities
    if pod.preemption_policy == "Never":
        return ["preemption: not possible: the pod has preemptionPolicy: Never"]
    if not _lowest_priority(ctx.snapshot) < pod.priority:
        return [f"preemption: not possible: no running pod has a priority below the pod's ({pod.priority})"]
    uu = sum(1 for s in d.verdicts.values() if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    u = sum(1 for s in d.verdicts.values() if s.code == Code.UNSCHEDULABLE)
    if u == 0:
        return [
            f"preemption: not helpful: all {uu} node(s) reject the pod for reasons evicting pods cannot fix "
            "(taints, affinity, node selectors, volumes, allocatable too small)"
        ]
    return [
        f"preemption: not possible: on the {u} node(s) where evicting pods could help, evicting every "
        f"pod of lower priority than {pod.priority} still would not make room ({uu} other node(s) cannot be helped)"
    ]
