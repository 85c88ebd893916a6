"""Add a toleration: for nodes rejected by TaintToleration, tolerate their taints and replay.

Mirrors the taint check of plugins/tainttoleration/taint_toleration.go: only NoSchedule and NoExecute taints
filter; nodes are grouped by the set of taints the pod does not tolerate, the biggest groups tried first.
"""

from __future__ import annotations

from typing import Any

from kdiagnose.model.objects import Taint
from kdiagnose.model.pools import CONTROL_PLANE_LABELS
from kdiagnose.remedies.whatif import Context, describe_status, is_transient_taint
from kdiagnose.results import Remedy
from kdiagnose.scheduler import names as n

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
    for name in ctx.nodes_failing(n.TAINT_TOLERATION):
        node = ctx.snapshot.node_info_by_name[name].node
        taints = tuple(
            t
            for t in node.taints
            if t.effect in _FILTERED_EFFECTS and not any(tol.tolerates(t) for tol in pod_tols)
        )
        if not taints:
            continue
        bad = [t for t in taints if is_transient_taint(t) or t.key in CONTROL_PLANE_LABELS]
        if bad:
            skipped.setdefault(str(bad[0]), []).append(name)
            continue
        groups.setdefault(taints, []).append(name)
    for taint, nodes in sorted(skipped.items()):
        notes.append(
            f"toleration: not suggested for {taint} on {len(nodes)} node(s) ({nodes[0]}...): it marks the node's state "
            "or the control plane, and tolerating it would only hide that"
            if len(nodes) > 1
            else f"toleration: not suggested for {taint} on node {nodes[0]}: it marks the node's state or the control plane"
        )
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
        if still:
            x, st = next(iter(still.items()))
            summary += f"; {len(still)} other tainted node(s) would still be blocked (e.g. {x}: {describe_status(st)})"
        out.append(
            Remedy(
                kind="toleration",
                summary=summary,
                plugin=n.TAINT_TOLERATION,
                reason=ctx.d.verdicts[nodes[0]].message,
                patch=ctx.patch(fragment),
                target=str(ctx.owner),
                unblocks=list(r.feasible),
                risk=(
                    f"the taint reserves these nodes for other workloads: tolerating it lets {ctx.owner} run beside "
                    "them, and the owner of the taint may object"
                    + (
                        "; a tolerated NoExecute taint no longer evicts the pod either"
                        if any(t.effect == "NoExecute" for t in taints)
                        else ""
                    )
                ),
                verify=f"{ctx.apply_hint(fragment, new_tols)}; then {ctx.verify_hint(r.feasible)}",
                details={
                    "taints": [str(t) for t in taints],
                    "still_blocked": {k: v.message for k, v in still.items()},
                },
            )
        )
    return out, notes
