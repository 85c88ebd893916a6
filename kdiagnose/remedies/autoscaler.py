"""Scale-up remedies that respect what the cluster's autoscaler will do (kdiagnose.autoscaler).

scale_pool.py proves that a new node of a pool fits the pod; this module says what it takes for that node
to appear, from the autoscaler's own state in the snapshot:
- cluster-autoscaler, group with room: "the autoscaler should add a node of group G (n of max m): wait, or
  check why it has not"; at its max: "raise the max of group G from m to m+k" (the provider's command);
  in backoff or unhealthy: says so and why (the status' backoffInfo), since CA will not scale it now.
- Karpenter: a NodePool that admits the pod (requirements, taints, limits as Karpenter judges them):
  "Karpenter should launch a node"; a NodePool whose limit blocks: "raise spec.limits.cpu of NodePool P
  from 100 to N"; NodePools without nodes yet are judged too (no template to replay, so no simulation).
- no evidence (no status ConfigMap, no NodePool, no --pools max): today's "scale node pool X by n", saying
  that nothing shows an autoscaler can add it.
Every such remedy carries `details["autoscaler"]`: source, group, current, max, can_add, blocked, room;
the CI gate passes a "fits only after scale-up" only when can_add is true.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdiagnose.autoscaler.karpenter import NODEPOOL_LABEL
from kdiagnose.autoscaler.view import Evidence, evidence_for, group_failure_events, view_for
from kdiagnose.results import AUTOMATIC, SAFE, Remedy

if TYPE_CHECKING:
    from kdiagnose.autoscaler.karpenter import Judgement, KNodePool
    from kdiagnose.model.pools import NodePool
    from kdiagnose.remedies.scale_pool import Fit
    from kdiagnose.remedies.whatif import Context

__all__ = ["SCALE_UP_KINDS", "apply_evidence", "karpenter_remedies", "karpenter_verdict", "raise_max_command"]

# Remedy kinds that add a node (the gate's "fits only after scale-up").
SCALE_UP_KINDS = ("scale-pool", "raise-max", "raise-limit")
_EKS = ("eks.amazonaws.com/nodegroup", "alpha.eksctl.io/nodegroup-name")
_GKE = ("cloud.google.com/gke-nodepool",)
_AKS = ("kubernetes.azure.com/agentpool", "agentpool")


def raise_max_command(pool: NodePool, group: str, new_max: int) -> tuple[list[str], str]:
    """(complete shell commands, advice) that raise a node group's max; cluster-autoscaler then scales it."""
    name = pool.name.split("=", 1)[-1]
    if pool.source in _EKS:
        return (
            [
                f"eksctl scale nodegroup --cluster <cluster> --name {name} --nodes-max {new_max}",
                # The alternative is a whole command line of its own, not prose to edit into one.
                "# or, for a managed node group, with the AWS CLI:",
                f"aws eks update-nodegroup-config --cluster-name <cluster> --nodegroup-name {name} "
                f"--scaling-config maxSize={new_max}",
            ],
            "",
        )
    if pool.source in _GKE:
        return (
            [
                f"gcloud container node-pools update {name} --cluster <cluster> --enable-autoscaling "
                f"--max-nodes {new_max}"
            ],
            "--max-nodes is per zone (--total-max-nodes for a total)",
        )
    if pool.source in _AKS:
        return (
            [
                f"az aks nodepool update -g <resource-group> --cluster-name <cluster> -n {name} "
                f"--update-cluster-autoscaler --min-count <min> --max-count {new_max}"
            ],
            "",
        )
    return (
        [
            f"# raise the max size of node group {group} to {new_max} with the cloud provider, or in "
            f"cluster-autoscaler's --nodes=MIN:MAX:{group} flag when it sets the bounds"
        ],
        "",
    )


def _limit_quantity(resource: str, value: int) -> str:
    if resource == "cpu":
        return str(-(-value // 1000))  # whole cores
    if resource == "memory":
        gi = 1 << 30
        return f"{-(-value // gi)}Gi"
    return str(value)


def _limit_remedy(np: KNodePool, j: Judgement, who: str, unblocks: list[str], pool_key: str) -> Remedy:
    old = np.limits_raw.get(j.resource, _limit_quantity(j.resource, j.limit))
    new = _limit_quantity(j.resource, j.needed)
    patch = f'{{"spec":{{"limits":{{"{j.resource}":"{new}"}}}}}}'
    cmd = f"kubectl patch nodepool {np.name} --type merge -p '{patch}'"
    return Remedy(
        kind="raise-limit",
        summary=f"raise spec.limits.{j.resource} of NodePool {np.name} from {old} to {new}",
        target=f"NodePool {np.name}",
        unblocks=unblocks,
        risk=(
            f"Karpenter may then launch nodes up to {new} {j.resource} in NodePool {np.name} for every pending "
            f"pod it matches, not only {who} (cost); the cloud account's quotas still apply"
        ),
        safety=SAFE,
        commands=[cmd],
        apply_note="Karpenter then launches a NodeClaim; the pod binds once its node is Ready",
        verify=f"kubectl get nodeclaims -l karpenter.sh/nodepool={np.name} -w  # a NodeClaim launches",
        rollback=f'kubectl patch nodepool {np.name} --type merge -p \'{{"spec":{{"limits":{{"{j.resource}":"{old}"}}}}}}\'',
        details={
            "pool": pool_key,
            "count": 1,
            "nodepool": np.name,
            "resource": j.resource,
            "from": old,
            "to": new,
            "autoscaler": _ev_details(
                Evidence("karpenter", np.name, blocked=f"Karpenter: {j.message}", kind="limit")
            ),
        },
    )


_CA_STATUS_CMD = "kubectl -n kube-system get configmap cluster-autoscaler-status -o yaml"


def _watch(pool: NodePool) -> str:
    return f"kubectl get nodes -l {pool.selector} -w" if pool.selector else "kubectl get nodes -w"


def _ev_details(ev: Evidence, room: str = "") -> dict[str, Any]:
    return {
        "source": ev.source or "none",
        "group": ev.group,
        "current": ev.current,
        "max": ev.max,
        "can_add": ev.can_add,
        "blocked": ev.blocked,
        "kind": ev.kind,
        "room": room,
    }


def apply_evidence(ctx: Context, pool: NodePool, fit: Fit, remedy: Remedy, pools: list[NodePool]) -> Remedy:
    """Rewrite a proven "scale node pool X by n" into what the pool's autoscaler needs."""
    ev = evidence_for(ctx.snapshot, pool, ctx.pod, pools)
    room = ev.room_text(pool.name, fit.count)
    remedy.details["autoscaler"] = _ev_details(ev, room)
    like = fit.template.rep.name if fit.template.rep else "the pool template"
    cost = f"adds {fit.count} node(s) shaped like {like} (cost)"
    if ev.source == "cluster-autoscaler" and ev.status is not None:
        g = ev.status
        label = pool.name
        if g.name != pool.name and f"group {g.name}" not in remedy.target:
            remedy.target += f"; cluster-autoscaler group {g.name}"
        if ev.kind == "max" or (not ev.blocked and fit.count > g.room):
            new_max = g.max_size + max(fit.count - max(g.room, 0), 1)
            cmds, advice = raise_max_command(pool, g.name, new_max)
            back, _ = raise_max_command(pool, g.name, g.max_size)
            remedy.kind = "raise-max"
            remedy.safety = SAFE
            remedy.summary = (
                f"raise the max of group {label} from {g.max_size} to {new_max} "
                f"(then the autoscaler adds {fit.count} node(s))"
            )
            remedy.risk = (
                f"{cost}; a higher max lets cluster-autoscaler grow group {pool.name} for every pending pod, "
                "not only this one; the cloud account's instance quota may still stop it"
            )
            remedy.commands = cmds
            remedy.apply_note = "; ".join(
                x
                for x in (advice, "cluster-autoscaler then adds the node; the pod binds once it is Ready")
                if x
            )
            remedy.verify = f"{_watch(pool)}  # a new node joins and turns Ready"
            remedy.rollback = back[0]
            remedy.details["autoscaler"]["can_add"] = False
            remedy.details["autoscaler"]["blocked"] = ev.blocked or (
                f"needs {fit.count} node(s), room for {g.room} ({g.cloud_provider_target} of max {g.max_size})"
            )
            return remedy
        if ev.blocked:
            failures = group_failure_events(ctx.snapshot, g.name)
            if failures:
                ev.blocked += f"; cluster-autoscaler recorded {failures[0]}"
                remedy.details["autoscaler"]["blocked"] = ev.blocked
            remedy.summary = f"fix node group {label} first: {ev.blocked}; a new node of it fits the pod"
            remedy.commands = [
                f"# {ev.blocked}: fix the cause with the cloud provider (quota, capacity, instance type)"
            ]
            remedy.apply_note = "cluster-autoscaler retries once the group is healthy and out of backoff"
            remedy.verify = f"{_CA_STATUS_CMD}  # the group's scaleUp status leaves Backoff/Unhealthy"
            remedy.rollback = "# nothing to undo"
            remedy.risk = f"{cost}; cluster-autoscaler will not add it while the group is {ev.kind}"
            if ev.kind == "backoff":
                remedy.risk += (
                    " (backoff ends on its own after a while; the cause, often a quota or capacity error, "
                    "returns on the next attempt unless fixed)"
                )
            return remedy
        coming = g.cloud_provider_target - g.registered
        if g.scale_up == "InProgress" and coming > 0:
            remedy.summary = (
                f"cluster-autoscaler is already adding {coming} node(s) to group {label} (registered "
                f"{g.registered}, target {g.cloud_provider_target} of max {g.max_size}): wait for them to register"
            )
        else:
            remedy.summary = (
                f"the autoscaler should add a node of group {label} ({g.cloud_provider_target} of max "
                f"{g.max_size}): wait, or check why it has not"
            )
        remedy.risk = f"{cost}; cluster-autoscaler does it on its own: nothing to change"
        remedy.safety = AUTOMATIC
        remedy.commands = []
        remedy.apply_note = (
            "nothing to apply: cluster-autoscaler adds the node; the pod binds once it is Ready"
        )
        remedy.verify = (
            f"kubectl get events -n {ctx.pod.namespace} --field-selector involvedObject.name={ctx.pod.name}"
            "  # TriggeredScaleUp from cluster-autoscaler; NotTriggerScaleUp says why not"
        )
        remedy.rollback = "# nothing to undo"
        return remedy
    if ev.source == "karpenter" and ev.nodepool is not None:
        np, j = ev.nodepool, ev.judgement
        if j is not None and j.kind == "limit":
            who = str(ctx.owner) if not ctx.owner.is_pod else f"pod {ctx.pod.key}"
            out = _limit_remedy(np, j, who, list(remedy.unblocks), pool.name)
            out.details["autoscaler"]["room"] = room
            return out
        if ev.blocked:
            remedy.summary = f"NodePool {np.name}: {ev.blocked}; a node like its current ones fits the pod"
            remedy.risk = f"{cost}; Karpenter will not launch it as the NodePool stands"
            remedy.commands = [f"# change NodePool {np.name} so Karpenter admits the pod: {ev.blocked}"]
            remedy.apply_note = "Karpenter then launches a NodeClaim for the pod"
            remedy.verify = f"kubectl get nodepool {np.name} -o yaml  # spec.template, spec.limits, status"
            remedy.rollback = "# restore the NodePool's previous spec"
            return remedy
        launching = _launching_for(ctx)
        if launching:
            remedy.summary = f"Karpenter is already launching a node for this pod: {launching}: wait for it"
        else:
            remedy.summary = (
                f"Karpenter should launch a node for NodePool {np.name} (its requirements, taints and limits "
                "admit the pod): wait, or check its events"
            )
        remedy.risk = (
            f"{cost}; Karpenter does it on its own: nothing to change; it may later consolidate the node "
            f"(NodePool {np.name} disruption: {np.budget_text()})"
        )
        remedy.safety = AUTOMATIC
        remedy.commands = []
        remedy.apply_note = "nothing to apply: Karpenter launches the node; the pod binds once it is Ready"
        remedy.verify = (
            f"kubectl get nodeclaims -l karpenter.sh/nodepool={np.name} -w  # a NodeClaim turns Ready"
        )
        remedy.rollback = "# nothing to undo"
        return remedy
    if ev.source == "pools-file" and not ev.blocked and ev.current is not None and ev.max is not None:
        remedy.summary += f" ({ev.current} of max {ev.max})"
        remedy.risk = remedy.risk.replace(
            "; the pool's max size is unknown to kdiagnose: the autoscaler may be at its limit", ""
        )
        return remedy
    if ev.blocked and ev.kind in ("none", "unmanaged"):
        remedy.risk = remedy.risk.replace(
            "the pool's max size is unknown to kdiagnose: the autoscaler may be at its limit", ev.blocked
        )
        if ev.blocked not in remedy.risk:
            remedy.risk += f"; {ev.blocked}"
    return remedy


def _launching_for(ctx: Context) -> str:
    """The NodeClaim Karpenter nominated this pod to (its Nominated event) while it is still launching."""
    from kdiagnose.autoscaler.events import pod_events
    from kdiagnose.autoscaler.view import pod_event_objects

    view = view_for(ctx.snapshot)
    for e in pod_events(pod_event_objects(ctx.snapshot, ctx.pod), None):
        for ref in e.nominated:
            kind, _, name = ref.partition("/")
            nc = next((c for c in view.nodeclaims if c.name == name), None) if kind == "nodeclaim" else None
            if nc is not None and nc.state in ("launching", "registering", "initializing"):
                return nc.describe()
    return ""


def karpenter_verdict(ctx: Context, pool: NodePool) -> str:
    """ "; Karpenter: <reason>" for a pool that is a Karpenter NodePool Karpenter would not launch for."""
    from kdiagnose.autoscaler.karpenter import judge

    if pool.source != NODEPOOL_LABEL:
        return ""
    np = view_for(ctx.snapshot).nodepool(pool.name.split("=", 1)[-1])
    if np is None:
        return ""
    j = judge(np, ctx.pod)
    return "" if j.admits else f"; Karpenter: {j.message}"


def karpenter_remedies(ctx: Context, covered: set[str]) -> tuple[list[Remedy], list[str]]:
    """NodePools no detected pool stands for (no nodes yet): judged as Karpenter would, without a replay."""
    from kdiagnose.autoscaler.karpenter import judge

    view = view_for(ctx.snapshot)
    out: list[Remedy] = []
    notes: list[str] = []
    who = str(ctx.owner) if not ctx.owner.is_pod else f"pod {ctx.pod.key}"
    for np in view.nodepools:
        if np.name in covered:
            continue
        j = judge(np, ctx.pod)
        if j.kind == "limit":
            out.append(_limit_remedy(np, j, who, [], f"karpenter.sh/nodepool={np.name}"))
            continue
        if not j.admits:
            notes.append(f"NodePool {np.name}: no scale-up: Karpenter: {j.message}")
            continue
        ev = Evidence("karpenter", np.name, nodepool=np, judgement=j)
        if np.ready == "False":
            notes.append(f"NodePool {np.name}: no scale-up: the NodePool is not Ready ({np.ready_message})")
            continue
        out.append(
            Remedy(
                kind="scale-pool",
                summary=(
                    f"Karpenter should launch a node for NodePool {np.name} (its requirements, taints and "
                    "limits admit the pod; instance types not checked): wait, or check its events"
                ),
                target=f"NodePool {np.name}",
                risk=(
                    "adds a node Karpenter picks (cost); the NodePool has no node yet, so kdiagnose cannot replay "
                    "one: the instance types its NodeClass offers decide whether the pod fits; Karpenter tries "
                    f"NodePools by weight (this one: {np.weight}); disruption: {np.budget_text()}"
                ),
                safety=AUTOMATIC,
                apply_note="nothing to apply: Karpenter launches the node if an instance type fits",
                verify=f"kubectl get nodeclaims -l karpenter.sh/nodepool={np.name} -w  # a NodeClaim turns Ready",
                rollback="# nothing to undo",
                details={
                    "pool": f"karpenter.sh/nodepool={np.name}",
                    "source": "karpenter.sh/nodepool",
                    "count": 1,
                    "simulated": False,
                    "autoscaler": _ev_details(ev, ev.room_text(np.name)),
                },
            )
        )
    return out, notes
