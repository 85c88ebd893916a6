"""Uncordon: nodes NodeUnschedulable rejected (spec.unschedulable, plugins/nodeunschedulable/
node_unschedulable.go), replayed as if `kubectl uncordon` had run (spec.unschedulable false and the
node.kubernetes.io/unschedulable taint the node lifecycle controller mirrors from it gone).

The remedy is safe for the workload, but the node was cordoned for a reason: its taints, annotations,
conditions and pods say which (a drain, Karpenter or cluster-autoscaler taking it away, maintenance).
Ties: the first feasible node by name is the one to uncordon (the others are listed).
"""

from __future__ import annotations

import copy

from kdiagnose.model.objects import Node
from kdiagnose.remedies.whatif import Context
from kdiagnose.results import SAFE, Remedy
from kdiagnose.scheduler import names as n

__all__ = ["MAX_NODES_TRIED", "cordon_reasons", "remedies"]

# Cordoned nodes replayed per pod (in name order).
MAX_NODES_TRIED = 50
_CORDON_TAINT = "node.kubernetes.io/unschedulable"
_GOING_AWAY = {
    "ToBeDeletedByClusterAutoscaler": "cluster-autoscaler is scaling it down",
    "DeletionCandidateOfClusterAutoscaler": "cluster-autoscaler marked it for scale-down",
    "karpenter.sh/disrupted": "Karpenter is disrupting it (consolidation, drift or expiry)",
    "karpenter.sh/disruption": "Karpenter is disrupting it (consolidation, drift or expiry)",
}


def cordon_reasons(ctx: Context, node: Node) -> list[str]:
    """What the node itself says about why it is cordoned (empty when it says nothing)."""
    out = [why for key, why in _GOING_AWAY.items() if any(t.key == key for t in node.taints)]
    ann = node.annotations
    if "weave.works/kured-node-lock" in ann:
        out.append("kured holds its reboot lock (a reboot for OS updates)")
    desired = ann.get("machineconfiguration.openshift.io/desiredConfig")
    if desired and desired != ann.get("machineconfiguration.openshift.io/currentConfig"):
        out.append("the machine-config operator is updating it")
    drain = sorted(k for k in ann if "drain" in k.lower())
    if drain:
        out.append(f"annotation {drain[0]} says a drain ran")
    bad = sorted(
        str(c.get("type"))
        for c in node.conditions
        if (c.get("type") == "Ready" and c.get("status") != "True")
        or (
            c.get("type") != "Ready" and c.get("status") == "True" and str(c.get("type")).endswith("Pressure")
        )
    )
    if bad:
        out.append(f"its conditions are not healthy ({', '.join(bad)})")
    ni = ctx.snapshot.node_info_by_name.get(node.name)
    if ni is not None and not out:
        mine = [p for p in ni.pods if (p.controller_ref() or {}).get("kind") != "DaemonSet"]
        if not mine:
            out.append("only DaemonSet pods are left on it: it looks drained (maintenance?)")
    return out


def _uncordoned(node: Node) -> Node:
    c = copy.copy(node)
    c.unschedulable = False
    c.taints = [t for t in node.taints if t.key != _CORDON_TAINT]
    return c


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    cordoned = sorted(
        x
        for x in ctx.nodes_failing(n.NODE_UNSCHEDULABLE)
        if ctx.snapshot.node_info_by_name[x].node.unschedulable
    )[:MAX_NODES_TRIED]
    if not cordoned:
        return [], []
    changes = {x: _uncordoned(ctx.snapshot.node_info_by_name[x].node) for x in cordoned}
    r = ctx.replay(ctx.snapshot.derive(node_changes=changes), nodes=cordoned)
    if not r.schedules:
        first = cordoned[0]
        st = r.verdicts.get(first)
        return [], [
            f"uncordon: not suggested: uncordoned, {first} would still be blocked"
            + (f" by {st.plugin}: {st.message}" if st is not None else "")
        ]
    feasible = sorted(r.feasible)
    node_name = feasible[0]
    node = ctx.snapshot.node_info_by_name[node_name].node
    reasons = cordon_reasons(ctx, node)
    others = feasible[1:]
    summary = f"uncordon node {node_name} (it is cordoned, and the pod fits it once it is not)"
    if others:
        summary += f"; {len(others)} other cordoned node(s) would fit too ({', '.join(others[:3])})"
    why = "; ".join(reasons) if reasons else "nothing on the node says why (ask whoever cordoned it)"
    return [
        Remedy(
            kind="uncordon",
            summary=summary,
            plugin=n.NODE_UNSCHEDULABLE,
            reason=ctx.d.verdicts[node_name].message,
            target=f"node {node_name}",
            unblocks=[node_name],
            risk=f"find out why it was cordoned first: {why}; uncordoning undoes a drain or a maintenance hold",
            verify=f"kubectl get pod/{ctx.pod.name} -n {ctx.pod.namespace} -o wide  # NODE: {node_name}",
            commands=[f"kubectl uncordon {node_name}"],
            rollback=f"kubectl cordon {node_name}",
            apply_note="the scheduler retries the pod when the node changes",
            safety=SAFE,
            change_size=1.0,
            details={"node": node_name, "cordon_reasons": reasons, "also_fit": others},
        )
    ], []
