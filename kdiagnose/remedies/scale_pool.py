"""Scale the matching node pool: add simulated nodes shaped like a pool's members and replay.

cluster-autoscaler's question (does a new node of this group fit the pod? TriggeredScaleUp vs
NotTriggerScaleUp), answered per pool: a template node from a representative member (its labels with the
hostname adjusted, its pool taints, its allocatable, the DaemonSet pods that run on every member) is added
to a copy of the snapshot; the pod must pass Filter on it. The count covers every pending pod of the same
owner, packed in order onto as many template nodes as they need (anti-affinity and spread included, since
each placed pod is bound in the copy before the next is replayed).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from kdiagnose.model.objects import Node, Pod, Taint
from kdiagnose.model.pools import NodePool, PoolSpec, _shape, detect_pools, pool_taints, zone_of
from kdiagnose.model.snapshot import NodeInfo, Snapshot
from kdiagnose.remedies.autoscaler import apply_evidence, karpenter_remedies, karpenter_verdict
from kdiagnose.remedies.whatif import Context, daemon_pods_for, describe_status, simulated_node, with_bound
from kdiagnose.results import Remedy
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.framework import Status

__all__ = ["MAX_PACKED_PODS", "pools_for", "remedies", "siblings", "try_pool"]

# Pending pods of one owner packed onto template nodes; beyond this the count is a lower bound.
MAX_PACKED_PODS = 100
# Distinct member shapes (zone x labels x taints x allocatable) tried per pool as templates.
MAX_TEMPLATES_PER_POOL = 6
_POOLS_KEY = "remedies/pools"


def pools_for(snapshot: Snapshot, specs: list[PoolSpec] | None = None) -> list[NodePool]:
    """The snapshot's pools, detected once per snapshot (pools from a file are not cached)."""
    if specs:
        return detect_pools(snapshot.node_infos, specs)
    cached: list[NodePool] | None = snapshot.cache.get(_POOLS_KEY)
    if cached is None:
        cached = detect_pools(snapshot.node_infos)
        snapshot.cache[_POOLS_KEY] = cached
    return cached


def _ready(ni: NodeInfo) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in ni.node.conditions)


def _not_ready(ni: NodeInfo) -> bool:
    """The node reports Ready False or Unknown (a node without conditions, as a trimmed dump may give it,
    is not known to be down)."""
    return any(c.get("type") == "Ready" and c.get("status") != "True" for c in ni.node.conditions)


def _healthy(ni: NodeInfo) -> bool:
    return _ready(ni) and not ni.node.unschedulable


def _representatives(pool: NodePool) -> list[NodeInfo]:
    """One member per distinct (zone, shape), healthy members first, then by node name (the "shaped like"
    node is a rule, never the input's order), at most MAX_TEMPLATES_PER_POOL. Once per pool: every
    pending pod's scale-up asks for the same ones."""
    hit: list[NodeInfo] | None = pool.memo.get("representatives")
    if hit is None:
        hit = pool.memo["representatives"] = _find_representatives(pool)
    return list(hit)


def _find_representatives(pool: NodePool) -> list[NodeInfo]:
    seen: set[object] = set()
    out: list[NodeInfo] = []
    for ni in sorted(pool.members, key=lambda m: (not _healthy(m), m.name)):
        key = (zone_of(ni.node), _shape(ni.node))
        if key in seen:
            continue
        seen.add(key)
        out.append(ni)
        if len(out) >= MAX_TEMPLATES_PER_POOL:
            break
    return out


def _sim_name(pool: str, i: int) -> str:
    base = re.sub(r"[^a-z0-9.-]+", "-", pool.lower()).strip("-.") or "pool"
    return f"{base[:200]}-simulated-{i}"


@dataclass(slots=True)
class Template:
    """How to build the i-th simulated node of a pool."""

    pool: NodePool
    labels: dict[str, str]
    taints: list[Taint]
    allocatable: dict[str, int]
    rep: NodeInfo | None

    def slices(self, ctx: Context, node_name: str) -> list[dict[str, Any]]:
        """The representative's node-local ResourceSlices, as the DRA driver would publish them on a new
        node: same devices, the new node's name and its own pool, nothing allocated yet."""
        if self.rep is None:
            return []
        out = []
        for sl in ctx.snapshot.kind("ResourceSlice"):
            spec = sl.get("spec")
            if not isinstance(spec, dict) or spec.get("nodeName") != self.rep.name:
                continue
            c = copy.deepcopy(sl)
            meta = c.setdefault("metadata", {})
            meta["name"] = f"{node_name}-{meta.get('name', 'slice')}"
            c["spec"]["nodeName"] = node_name
            pool = c["spec"].get("pool")
            if isinstance(pool, dict) and pool.get("name") == self.rep.name:
                pool["name"] = node_name
            out.append(c)
        return out

    def node(self, i: int) -> tuple[Node, list[Pod]]:
        name = _sim_name(self.pool.name, i)
        own = self.rep.name if self.rep is not None else None
        # A label whose value is the member's own name (topology.topolvm.io/node) names the new node instead.
        labels = {k: (name if own and v == own else v) for k, v in self.labels.items()}
        node = simulated_node(name, labels, self.taints, self.allocatable)
        if self.rep is not None:
            # A new node of the pool runs the kubelet its members run (same version, same feature gates), so
            # it declares what the representative declares (status.declaredFeatures, NodeDeclaredFeatures
            # v1.36+): without this every scale-up of a pool that does declare a feature the pod needs
            # failed NodeDeclaredFeatures, and only the risky kubelet reconfiguration was left.
            node.declared_features = self.rep.node.declared_features
            node.kubelet_version = self.rep.node.kubelet_version
        return node, daemon_pods_for(self.rep, name)


def templates(pool: NodePool, label_overrides: dict[str, str] | None = None) -> list[Template]:
    over = label_overrides or {}
    spec = pool.spec
    if spec is not None and (spec.allocatable or not pool.members):
        rep = min(pool.members, key=lambda m: m.name) if pool.members else None
        return [Template(pool, {**spec.labels, **over}, list(spec.taints), dict(spec.allocatable), rep)]
    return [
        Template(pool, {**rep.node.labels, **over}, pool_taints(rep.node), dict(rep.node.allocatable), rep)
        for rep in _representatives(pool)
    ]


def siblings(ctx: Context) -> list[Pod]:
    """The other pending pods of the same controller, oldest first (ties by name)."""
    ref = ctx.pod.controller_ref()
    if ref is None:
        return []
    key = (ref.get("kind"), ref.get("name"))
    out = [
        p
        for p in ctx.snapshot.pending
        if p is not ctx.pod
        and p.namespace == ctx.pod.namespace
        and (r := p.controller_ref()) is not None
        and (r.get("kind"), r.get("name")) == key
    ]
    out.sort(key=lambda p: (p.creation_timestamp, p.name))
    return out


def _headroom(pool: NodePool) -> int | None:
    spec = pool.spec
    if spec is None or spec.max is None:
        return None
    current = spec.current if spec.current is not None else len(pool.members)
    return spec.max - current


@dataclass(slots=True)
class Fit:
    template: Template
    count: int  # simulated nodes used
    placed: int  # pending pods of the owner placed (the diagnosed pod included)
    total: int  # pending pods of the owner (capped at MAX_PACKED_PODS)
    nodes: list[str]
    capped: bool  # stopped at the pool's max size


def _derive(ctx: Context, tpl: Template, nodes: list[tuple[Node, list[Pod]]]) -> Snapshot:
    slices = [sl for nd, _ in nodes for sl in tpl.slices(ctx, nd.name)]
    return ctx.snapshot.derive(extra_nodes=nodes, extra_objects={"ResourceSlice": slices} if slices else None)


def _first_node(
    ctx: Context, pool: NodePool, tpl: Template, key: tuple[Any, ...]
) -> tuple[tuple[Node, list[Pod]], Snapshot]:
    """The template's first simulated node and the snapshot with it added. It does not depend on the pod
    asking, so it is built once per pool and template (kept in the pool's memo, which lives as long as the
    snapshot's pools) and every pending pod's scale-up replays on the same copy: the copy's own indexes
    (pods by namespace, label indexes, the PreFilter memos of pods with the same terms) are then shared."""
    memo_key = f"first-node {key!r}"
    hit: tuple[tuple[Node, list[Pod]], Snapshot] | None = pool.memo.get(memo_key)
    if (
        hit is not None
        and hit[1].parent is ctx.snapshot
        and hit[1].parent_generation == ctx.snapshot.generation
    ):
        return hit
    first = tpl.node(1)
    out = (first, _derive(ctx, tpl, [first]))
    pool.memo[memo_key] = out
    return out


def _pack(ctx: Context, tpl: Template, first: tuple[Node, list[Pod]], headroom: int | None) -> Fit:
    nodes = [first]
    binds: list[tuple[Pod, str]] = [(ctx.pod, first[0].name)]
    others = siblings(ctx)[: MAX_PACKED_PODS - 1]
    capped = False
    for sib in others:
        snap = with_bound(_derive(ctx, tpl, nodes), binds)
        r = ctx.replay(snap, sib, [nd.name for nd, _ in nodes])
        if r.schedules:
            binds.append((sib, r.feasible[0]))
            continue
        if headroom is not None and len(nodes) >= headroom:
            capped = True
            continue
        fresh = tpl.node(len(nodes) + 1)
        snap = with_bound(_derive(ctx, tpl, [*nodes, fresh]), binds)
        r = ctx.replay(snap, sib, [fresh[0].name])
        if r.schedules:
            nodes.append(fresh)
            binds.append((sib, fresh[0].name))
    return Fit(tpl, len(nodes), len(binds), len(others) + 1, [nd.name for nd, _ in nodes], capped)


def _why(pool: NodePool, st: Status, daemons: list[Pod]) -> str:
    det = st.details[0] if st.details else {}
    if st.plugin == n.NODE_PORTS and daemons:
        # The holder is a copy of a DaemonSet pod made for the simulated node (daemon_pods_for): name its
        # DaemonSet, which is the same for every template, not the copy.
        owners = {
            f"{p.namespace}/{p.name}": f"{p.namespace}/{ref.get('name')}"
            for p in daemons
            if (ref := p.controller_ref()) is not None
        }
        ds = next((owners[k] for d in st.details if (k := str(d.get("usedBy"))) in owners), None)
        if ds:
            ports = ", ".join(sorted({str(d.get("port")) for d in st.details if d.get("port")}))
            return (
                f"a new node would fail NodePorts: DaemonSet {ds} holds host port "
                f"{ports} on every node of the pool"
            )
    if st.plugin == n.TAINT_TOLERATION:
        return f"the pool's taint {det.get('taint', '')} is not tolerated by the pod".replace("  ", " ")
    if st.plugin == n.NODE_AFFINITY:
        what = det.get("nodeSelector") or det.get("nodeAffinity") or det.get("addedAffinity") or ""
        if isinstance(what, list):
            what = " or ".join(str(x) for x in what)
        return f"the pool's labels do not match the pod's node affinity/selector ({what})"
    if st.plugin == n.NODE_RESOURCES_FIT:
        return f"a new node is too small: {describe_status(st)}"
    if st.plugin == n.DYNAMIC_RESOURCES:
        # The simulated node publishes the devices of the pool's representative (Template.slices).
        return (
            "a new node would offer only the DRA devices the pool's nodes publish (ResourceSlices), which "
            f"cannot satisfy the claims: {describe_status(st)}"
        )
    return f"a new node would fail {st.plugin or 'PreFilter'}: {describe_status(st)}"


def try_pool(
    ctx: Context, pool: NodePool, label_overrides: dict[str, str] | None = None
) -> tuple[Fit | None, str]:
    """The packing on the first template of the pool that fits the pod, or why none does."""
    headroom = _headroom(pool)
    why: list[str] = []
    for i, tpl in enumerate(templates(pool, label_overrides)):
        first, snap = _first_node(ctx, pool, tpl, (i, tuple(sorted((label_overrides or {}).items()))))
        r = ctx.replay(snap, nodes=[first[0].name])
        st = r.verdicts.get(first[0].name) or r.prefilter
        if r.schedules:
            if headroom is not None and headroom <= 0:
                return (
                    None,
                    f"a new node would fit, but the pool is at its max size ({pool.spec.max if pool.spec else '?'})",
                )
            return _pack(ctx, tpl, first, headroom), ""
        if st is not None:
            text = _why(pool, st, first[1])
            if text not in why and len(why) < 3:
                why.append(text)
    return None, "; ".join(why) or "no member to copy"


def remedies(ctx: Context, specs: list[PoolSpec] | None = None) -> tuple[list[Remedy], list[str]]:
    out: list[Remedy] = []
    notes: list[str] = []
    pinned = ctx.d.prefilter_node_names
    if pinned is not None:
        shown = ", ".join(pinned[:3]) + ("..." if len(pinned) > 3 else "")
        return out, [
            f"pools: no scale-up: the pod is pinned to node(s) {shown or '(none)'} by its node affinity (matchFields metadata.name): no new node can run it"
        ]
    pools = pools_for(ctx.snapshot, specs)
    for pool in pools:
        if pool.control_plane and pool.spec is None:
            notes.append(f"pool {pool.name}: no scale-up: control-plane nodes are not autoscaled")
            continue
        fit, why = try_pool(ctx, pool)
        if fit is None:
            notes.append(f"pool {pool.name}: no scale-up: {why}{karpenter_verdict(ctx, pool)}")
            continue
        out.append(apply_evidence(ctx, pool, fit, _remedy(ctx, pool, fit), pools))
    # Karpenter NodePools no node stands for yet: judged as Karpenter would (no template to replay).
    covered = {p.name.split("=", 1)[-1] for p in pools if p.source == "karpenter.sh/nodepool"}
    found, more = karpenter_remedies(ctx, covered)
    out.extend(found)
    notes.extend(more)
    out.sort(key=lambda r: (int(r.details["count"]), str(r.details["pool"])))
    return out, notes


def _how(pool: NodePool, size: int) -> tuple[list[str], str]:
    """(commands, advice) that resize the pool, by the label that named it (cloud CLIs need the cluster's
    name). Each alternative is a command line of its own after a `# or ...` comment line, so that each copy
    is one whole command; the advice is prose only."""
    src, name = pool.source, pool.name.split("=", 1)[-1]
    if src in ("eks.amazonaws.com/nodegroup", "alpha.eksctl.io/nodegroup-name"):
        return (
            [
                f"eksctl scale nodegroup --cluster <cluster> --name {name} --nodes {size}",
                "# or, for a managed node group, with the AWS CLI:",
                f"aws eks update-nodegroup-config --cluster-name <cluster> --nodegroup-name {name} "
                f"--scaling-config desiredSize={size}",
            ],
            # Both refuse a desired size above the group's max: say how to raise it with each.
            f"if the group's max is below {size}, add --nodes-max {size} (eksctl) or "
            f"maxSize={size} to --scaling-config (aws)",
        )
    if src == "cloud.google.com/gke-nodepool":
        # --num-nodes counts per zone: exact for a one-zone pool; for a multi-zonal one the advice says so.
        zones = {z for m in pool.members if (z := zone_of(m.node))}
        autoscaled = [
            "# or, when the pool autoscales, raise its max (--max-nodes is per zone):",
            f"gcloud container node-pools update {name} --cluster <cluster> --enable-autoscaling "
            "--max-nodes <max>",
        ]
        if len(zones) <= 1:
            return (
                [
                    f"gcloud container clusters resize <cluster> --node-pool {name} --num-nodes {size}",
                    *autoscaled,
                ],
                "",
            )
        return (
            [f"gcloud container clusters resize <cluster> --node-pool {name} --num-nodes <n>", *autoscaled],
            f"<n> is per zone and the pool spans {len(zones)} zones ({size} nodes in all are needed)",
        )
    if src in ("kubernetes.azure.com/agentpool", "agentpool"):
        return (
            [
                f"az aks nodepool scale -g <resource-group> --cluster-name <cluster> --name {name} "
                f"--node-count {size}",
                # `az aks nodepool scale` refuses a pool whose cluster autoscaler is enabled.
                "# or, when the cluster autoscaler manages the pool, raise its max:",
                f"az aks nodepool update -g <resource-group> --cluster-name <cluster> -n {name} "
                f"--update-cluster-autoscaler --min-count <min> --max-count {size}",
            ],
            "",
        )
    if src == "karpenter.sh/nodepool":
        return (
            [f"kubectl get nodepool {name} -o yaml"],
            f"Karpenter launches the nodes itself: check NodePool {name}'s limits and requirements and its events",
        )
    if src == "karpenter.sh/provisioner-name":
        return (
            [f"kubectl get provisioner {name} -o yaml"],
            f"Karpenter launches the nodes itself: check Provisioner {name}'s limits",
        )
    # No CLI is known for the pool's provider: the step, as a shell comment (safe to paste, does nothing).
    if src in ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"):
        step = (
            f"{pool.source}={name} is an instance type, not a node group: grow the group (or autoscaler) "
            f"that launches {name} nodes to {size}"
        )
    elif src == "file":
        step = f"grow node pool {pool.name} to {size} nodes with your provider's tool"
    else:
        step = f"grow the node group behind these nodes to {size} (no pool label names it)"
    return [f"# {step}"], ""


def _remedy(ctx: Context, pool: NodePool, fit: Fit, kind: str = "scale-pool", extra: str = "") -> Remedy:
    who = str(ctx.owner) if not ctx.owner.is_pod else f"pod {ctx.pod.key}"
    summary = f"scale node pool {pool.name} by {fit.count}{extra}"
    if fit.total > 1:
        summary += f" (fits {fit.placed} of the {fit.total} pending pods of {who})"
    headroom = _headroom(pool)
    like = fit.template.rep.name if fit.template.rep else "the pool template"
    risk = f"adds {fit.count} node(s) shaped like {like} (cost)"
    if headroom is None:
        risk += "; the pool's max size is unknown to kdiagnose: the autoscaler may be at its limit"
    elif fit.capped:
        risk += f"; the pool's max size ({pool.spec.max if pool.spec else '?'}) stops the scale-up before every pod fits"
    if pool.source == "shape":
        risk += "; the pool was inferred from identical node shapes: check that an autoscaling group backs it"
    if pool.members and all(_not_ready(m) for m in pool.members):
        # The simulated node is Ready by construction; the real ones are not, and a new node of the same
        # group may not be either (the what-if cannot tell).
        first = min(m.name for m in pool.members)
        # Said first: at the end of the cost and autoscaler caveats it was easy to miss.
        risk = (
            f"none of the pool's {len(pool.members)} node(s) is Ready: what keeps them NotReady may keep a new "
            f"node NotReady too: look first (kubectl describe node {first}); {risk}"
        )
    current = (
        pool.spec.current if pool.spec is not None and pool.spec.current is not None else len(pool.members)
    )
    watch = f"kubectl get nodes -l {pool.selector} -w" if pool.selector else "kubectl get nodes -w"
    commands, advice = _how(pool, current + fit.count)
    return Remedy(
        kind=kind,
        summary=summary,
        target=f"node pool {pool.name}"
        + (f" ({pool.selector})" if pool.selector and pool.selector != pool.name else ""),
        unblocks=list(fit.nodes),
        risk=risk,
        commands=commands,
        apply_note="; ".join(x for x in (advice, "the pod binds once a new node is Ready") if x),
        verify=f"{watch}  # a new node joins and turns Ready",
        rollback="# let the autoscaler remove the idle nodes, or scale the pool back down",
        details={
            "pool": pool.name,
            "source": pool.source,
            "selector": pool.selector,
            "count": fit.count,
            "template": fit.template.rep.name if fit.template.rep else "",
            "pods": fit.placed,
            "pending": fit.total,
            "simulated": True,
        },
    )
