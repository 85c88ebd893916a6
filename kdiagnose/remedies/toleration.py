"""Add a toleration: for nodes rejected by TaintToleration, tolerate their taints and replay.

Mirrors the taint check of plugins/tainttoleration/taint_toleration.go: only NoSchedule and NoExecute taints
filter; nodes are grouped by the set of taints the pod does not tolerate, the biggest groups tried first.
Each taint is classified first (remedies/safety.py): node-state, control-plane, accelerator (for a pod that
requests none) and `*/dedicated` taints are never tolerated (Ruled out); the others are risky.
"""

from __future__ import annotations

from typing import Any

from kdiagnose.model.objects import Node, Taint
from kdiagnose.remedies import safety
from kdiagnose.remedies.whatif import Context, describe_status
from kdiagnose.results import RISKY, SAFE, Remedy
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.describe import with_cause

__all__ = ["MAX_TAINT_GROUPS", "remedies", "toleration_for"]

MAX_TAINT_GROUPS = 3
_FILTERED_EFFECTS = ("NoSchedule", "NoExecute")


def toleration_for(t: Taint) -> dict[str, Any]:
    """The narrowest toleration of one taint: Equal on its value (Exists when it has none)."""
    if t.value:
        return {"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
    return {"key": t.key, "operator": "Exists", "effect": t.effect}


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    notes: list[str] = []
    groups: dict[tuple[Taint, ...], list[str]] = {}
    skipped: dict[str, list[str]] = {}
    pod_tols = ctx.pod.tolerations
    # Thousands of nodes carry a handful of distinct taints: each judged once. A taint's class depends on
    # the node only through whether the node offers a resource named like the taint (safety.classify_taint).
    untolerated: dict[Taint, bool] = {}
    judged_as: dict[tuple[Taint, bool], safety.TaintClass] = {}

    def blocks(t: Taint) -> bool:
        hit = untolerated.get(t)
        if hit is None:
            hit = untolerated[t] = t.effect in _FILTERED_EFFECTS and not any(
                tol.tolerates(t) for tol in pod_tols
            )
        return hit

    def judged(t: Taint, node: Node) -> safety.TaintClass:
        key = (t, t.key in node.allocatable)
        c = judged_as.get(key)
        if c is None:
            c = judged_as[key] = safety.classify_taint(t, ctx.pod, node)
        return c

    for name in ctx.nodes_failing(n.TAINT_TOLERATION):
        node = ctx.snapshot.node_info_by_name[name].node
        taints = tuple(t for t in node.taints if blocks(t))
        if not taints:
            continue
        never = [(t, c) for t in taints if (c := judged(t, node)).safety == safety.NEVER]
        if never:
            t, c = never[0]
            skipped.setdefault(f"{t}\x00{c.why}", []).append(name)
            continue
        groups.setdefault(taints, []).append(name)
    for key, nodes in sorted(skipped.items()):
        taint, why = key.split("\x00", 1)
        where = f"{len(nodes)} node(s) ({nodes[0]}, ...)" if len(nodes) > 1 else f"node {nodes[0]}"
        notes.append(safety.ruled_out("toleration", f"tolerating {taint} on {where}", why))
    out: list[Remedy] = []
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), [str(t) for t in kv[0]]))
    for taints, nodes in ranked[:MAX_TAINT_GROUPS]:
        new_tols = [toleration_for(t) for t in taints]
        base = [t for t in ctx.base_spec().get("tolerations") or [] if isinstance(t, dict)]

        def mutate(obj: dict[str, Any], add: list[dict[str, Any]] = new_tols) -> None:
            obj["spec"]["tolerations"] = list(obj["spec"].get("tolerations") or []) + add

        fragment = {"tolerations": base + new_tols}
        pod = ctx.modified_pod(mutate)
        if pod is None:
            notes.append("toleration: the pod's object is not available: cannot replay a change to it")
            break
        r = ctx.replay_modified(pod, nodes)
        taint_text = ", ".join(str(t) for t in taints)
        still = {x: r.verdicts[x] for x in nodes if x in r.verdicts and not r.verdicts[x].ok}
        if not r.schedules:
            first = next(iter(still.items()))
            notes.append(
                f"toleration: tolerating {taint_text} would not help: {first[0]} would still fail "
                f"{first[1].plugin}: {describe_status(first[1])}"
            )
            continue
        summary = f"add a toleration for {taint_text} to {ctx.owner}"
        node = ctx.snapshot.node_info_by_name[nodes[0]].node
        classes = [safety.classify_taint(t, ctx.pod, node) for t in taints]
        risks = [c.why for c in classes if c.why] or [
            f"lets {ctx.owner} run on nodes whose taint it did not tolerate before"
        ]
        if still:
            x, st = next(iter(still.items()))
            summary += f"; {len(still)} other tainted node(s) would still be blocked, e.g. {with_cause(x, describe_status(st))}"
        out.append(
            Remedy(
                kind="toleration",
                summary=summary,
                plugin=n.TAINT_TOLERATION,
                reason=ctx.d.verdicts[nodes[0]].message,
                target=str(ctx.owner),
                unblocks=list(r.feasible),
                risk="; ".join(risks)
                + (
                    "; a tolerated NoExecute taint no longer evicts the pod either"
                    if any(t.effect == "NoExecute" for t in taints)
                    else ""
                ),
                safety=RISKY if any(c.safety == RISKY for c in classes) else SAFE,
                change_size=float(len(taints)),
                **ctx.change(fragment, r.feasible, new_tols),
                details={
                    "taints": [str(t) for t in taints],
                    "still_blocked": {k: v.message for k, v in still.items()},
                },
            )
        )
    return out, notes
