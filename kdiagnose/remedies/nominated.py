"""Stale nominations: another pending pod's status.nominatedNodeName holds a node the pod would fit.

kube-scheduler adds the pods nominated to a node (priority >= the pod's) before filtering it
(RunFilterPluginsWithNominatedPods, framework/runtime/framework.go; addGENominatedPods). A nomination is
stale when its pod no longer fits the node it was nominated to (its preemption's victims came back, the
node changed): it then reserves room nobody will use until that pod's next attempt clears it. Live mode
only (the offline corpora schedule each pending pod alone). Proven by replaying with the stale nominated
pods gone; a nomination that still fits is explained in a note, not removed.
"""

from __future__ import annotations

import json
import shlex

from kdiagnose.model.objects import Pod
from kdiagnose.remedies.whatif import Context, filter_replay
from kdiagnose.results import SAFE, Remedy

__all__ = ["MAX_NODES_TRIED", "remedies"]

MAX_NODES_TRIED = 10
_CLEAR = json.dumps({"status": {"nominatedNodeName": None}}, separators=(",", ":"))


def _nominated_to(ctx: Context, node: str) -> list[Pod]:
    """Pending pods nominated to `node` with priority >= the pod's (the ones the filter adds), by key."""
    return sorted(
        (
            p
            for p in ctx.snapshot.pending
            if p.nominated_node_name == node and p is not ctx.pod and p.priority >= ctx.pod.priority
        ),
        key=lambda p: p.key,
    )


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    if not ctx.scheduler.nominated:
        return [], []
    notes: list[str] = []
    out: list[Remedy] = []
    failing = sorted(x for x, s in ctx.d.verdicts.items() if not s.ok)
    held = [(x, ps) for x in failing if (ps := _nominated_to(ctx, x))][:MAX_NODES_TRIED]
    for node, nominated in held:
        freed = ctx.snapshot.derive(remove_pods=nominated)
        ctx.replays += 1
        if not filter_replay(freed, ctx.scheduler, ctx.pod, [node]).schedules:
            continue  # the node is full without them too: the nomination is not what blocks
        stale = []
        for p in nominated:
            others = ctx.snapshot.derive(remove_pods=[q for q in nominated if q is not p])
            ctx.replays += 1
            if not filter_replay(others, ctx.scheduler, p, [node]).schedules:
                stale.append(p)
        live = [p for p in nominated if p not in stale]
        if live:
            notes.append(
                f"nominated: {node} is held for {', '.join(p.key for p in live)} (nominated there, priority >= "
                f"{ctx.pod.priority}, and it fits): it binds there first"
            )
            continue
        who = ", ".join(p.key for p in stale)
        out.append(
            Remedy(
                kind="stale-nomination",
                summary=(
                    f"clear the stale nominatedNodeName of {who} on {node}: it no longer fits there, and its "
                    "nomination holds the room this pod needs"
                ),
                target=who,
                unblocks=[node],
                risk=(
                    "the scheduler clears it itself on that pod's next attempt (up to its backoff, at most 5 "
                    "minutes in the unschedulable queue): clearing it by hand only saves that wait"
                ),
                commands=[
                    f"kubectl patch pod/{p.name} -n {p.namespace} --subresource=status --type=merge -p "
                    f"{shlex.quote(_CLEAR)}"
                    for p in stale
                ],
                verify=f"kubectl get pod/{ctx.pod.name} -n {ctx.pod.namespace} -o wide  # NODE: {node}",
                rollback="# nothing to roll back: the scheduler nominates again if a preemption needs it",
                apply_note="the scheduler retries the pod when the nominated pod changes",
                safety=SAFE,
                change_size=float(len(stale)),
                details={"node": node, "nominated": [p.key for p in stale]},
            )
        )
        break
    return out, notes
