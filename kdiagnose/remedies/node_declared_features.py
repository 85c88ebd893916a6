"""Enable a node feature: nodes NodeDeclaredFeatures rejected (plugins/nodedeclaredfeatures/
nodedeclaredfeatures.go, default profile from v1.36) because their kubelet does not list a feature the pod's
spec requires in status.declaredFeatures.

A kubelet declares a feature when its own feature gate is on (and, for some, when the container runtime
supports it: component-helpers nodedeclaredfeatures/features/*/Discover), and only from v1.35 on (the
NodeDeclaredFeatures gate, alpha in v1.35, on from v1.36). So the remedy is a node-side change for one pool:
upgrade its kubelets and/or turn the kubelet feature gate on. It is replayed (the pool's rejected nodes
declaring the missing features) and always RISKY: it reconfigures every node of the pool, restarts its
kubelets (a managed pool replaces its nodes), and an alpha gate is not meant for production. The change to
the workload that would avoid the requirement (dropping the pod field that needs the feature) changes what
the workload does, so it is never a remedy: it is a "Ruled out" line.

Which pools/nodes already declare the features is a note, with why they do not help.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from kdiagnose.model.objects import Node
from kdiagnose.remedies import safety
from kdiagnose.remedies.scale_pool import pools_for
from kdiagnose.remedies.whatif import Context
from kdiagnose.results import RISKY, Remedy
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.plugins.nodedeclaredfeatures.nodedeclaredfeatures import (
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
    VOLUME_BIND_MOUNT_OPTIONS,
    infer_for_scheduling,
    registered_features,
)

__all__ = ["FEATURES", "FeatureFacts", "remedies"]

# The kubelet gate that makes a kubelet publish status.declaredFeatures at all.
_NDF_GATE = "NodeDeclaredFeatures"
_NDF_ALPHA, _NDF_ON = 35, 36  # kube_features.go: {1.35 Alpha false}, {1.36 Beta true}, {1.37 GA}


@dataclass(frozen=True, slots=True)
class FeatureFacts:
    """What a kubelet needs to declare a feature (component-helpers v0.37 Discover, kube_features.go v1.37)."""

    gate: str  # the kubelet feature gate Discover reads
    since: int  # first minor whose kubelet has the gate
    on_from: int | None  # first minor where the gate is on by default (None: off in every known release)
    runtime: str  # what the container runtime must support too ("" when nothing)
    pod_field: str  # the pod field that makes the scheduler require it (for the "Ruled out" line)
    dropping_it: str  # what dropping that field would do to the workload


FEATURES: dict[str, FeatureFacts] = {
    RESTART_ALL_CONTAINERS: FeatureFacts(
        gate=RESTART_ALL_CONTAINERS,
        since=35,
        on_from=36,
        runtime="",
        pod_field="a container's restartPolicyRules action RestartAllContainers",
        dropping_it="a failing container would no longer restart the whole pod, which the workload relies on",
    ),
    USER_NAMESPACES_HOST_NETWORK: FeatureFacts(
        gate=USER_NAMESPACES_HOST_NETWORK,
        since=35,
        on_from=None,
        runtime="user namespaces with host networking (a recent containerd or CRI-O)",
        pod_field="hostUsers: false with hostNetwork: true",
        dropping_it="without hostUsers: false the pod's root user is root on the host (hostNetwork makes that worse)",
    ),
    VOLUME_BIND_MOUNT_OPTIONS: FeatureFacts(
        gate=VOLUME_BIND_MOUNT_OPTIONS,
        since=37,
        on_from=None,
        runtime="bind mount options in the CRI (containerd 2.2.1 does not report it)",
        pod_field="volumeMounts[].bindMountOptions",
        dropping_it="the volumes would be mounted without the options the workload asked for (e.g. read-only or no-exec)",
    ),
}

_VERSION_RE = re.compile(r"^v?1\.(\d+)")
# Pools tried per pod (in name order).
MAX_POOLS_TRIED = 20


def _kubelet_minor(node: Node) -> int | None:
    m = _VERSION_RE.match(node.kubelet_version)
    return int(m.group(1)) if m else None


def _declaring(node: Node, wanted: frozenset[str], registry: frozenset[str]) -> bool:
    return wanted <= (node.declared_features & registry)


def _steps(feature: str, minor: int | None, control_plane: int) -> tuple[str, str]:
    """(what to change on the pool's kubelets, why it is risky) for one missing feature; the kubelets may
    not be newer than the control plane (the version skew policy), so no step goes past `control_plane`."""
    facts = FEATURES.get(feature)
    if facts is None:
        return f"make the kubelets declare {feature}", f"kdiagnose does not know what {feature} needs"
    parts: list[str] = []
    risks: list[str] = []
    have = f"v1.{minor}" if minor is not None else "an unknown version"
    if minor is None or minor < facts.since:
        target = max(facts.since, _NDF_ALPHA)
        parts.append(
            f"upgrade the kubelets (they run {have}) to v1.{target} or later (at most v1.{control_plane})"
        )
        risks.append("a node upgrade drains and replaces or restarts every node of the pool")
    else:
        target = minor
    off = [g for g in (facts.gate, _NDF_GATE) if not _default_on(g, target)]
    if off:
        parts.append("turn on the kubelet feature gate" + ("s " if len(off) > 1 else " ") + ", ".join(off))
        risks.append(
            f"{', '.join(off)} {'is' if len(off) == 1 else 'are'} alpha at v1.{target}: off by default and not meant for production"
        )
        on_from = max(facts.on_from or 0, _NDF_ON)
        if facts.on_from is not None and target < on_from <= control_plane:
            parts[-1] += f", or upgrade the kubelets to v1.{on_from} or later, where it is on by default"
    else:
        # On by default at this version, yet not declared: someone turned a gate off on purpose.
        parts.append(
            f"find out why the kubelets run with {facts.gate} (or {_NDF_GATE}) turned off, on by default at "
            f"{have}, and turn it back on"
        )
        risks.append("the gate was turned off on purpose, perhaps for a known problem")
    if facts.runtime:
        parts.append(f"make sure the container runtime supports {facts.runtime}")
        risks.append("the kubelet declares it only when the runtime supports it")
    return "; ".join(parts), "; ".join(risks)


def _default_on(gate: str, minor: int) -> bool:
    if gate == _NDF_GATE:
        return minor >= _NDF_ON
    facts = FEATURES.get(gate)
    return facts is not None and facts.on_from is not None and minor >= facts.on_from


def _with_features(node: Node, features: frozenset[str]) -> Node:
    c = copy.copy(node)
    c.declared_features = node.declared_features | features
    return c


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    rejected = sorted(ctx.nodes_failing(n.NODE_DECLARED_FEATURES))
    if not rejected:
        return [], []
    dialect = ctx.snapshot.dialect
    wanted = infer_for_scheduling(ctx.pod, dialect)
    if not wanted:
        return [], []
    registry = registered_features(dialect)
    feature_list = ", ".join(sorted(wanted))
    notes: list[str] = []

    # Who declares the features already, and why they do not take the pod.
    by_node = ctx.snapshot.node_info_by_name
    pools = pools_for(ctx.snapshot)
    pool_of: dict[str, str] = {ni.name: p.name for p in pools for ni in p.members}
    declaring = sorted(ni.name for ni in ctx.snapshot.node_infos if _declaring(ni.node, wanted, registry))
    if declaring:
        blocked = [x for x in declaring if x in ctx.d.verdicts and not ctx.d.verdicts[x].ok]
        where = _grouped(declaring, pool_of)
        why = ""
        if blocked:
            st = ctx.d.verdicts[blocked[0]]
            why = f": they are blocked by other filters (e.g. {blocked[0]}: {st.plugin}: {st.message})"
        notes.append(f"node features: {feature_list} is declared by {len(declaring)} node(s) ({where}){why}")
    else:
        notes.append(f"node features: no node declares {feature_list} in status.declaredFeatures")

    # The workload-side way out changes what the workload does: never a remedy.
    for f in sorted(wanted):
        facts = FEATURES.get(f)
        if facts is not None:
            notes.append(
                safety.ruled_out(
                    "node-feature",
                    f"drop {facts.pod_field} from the pod so it no longer needs {f}",
                    facts.dropping_it,
                )
            )

    # One remedy per pool of rejected nodes: those nodes, declaring what they miss, replayed.
    groups: dict[str, list[str]] = {}
    for x in rejected:
        groups.setdefault(pool_of.get(x, x), []).append(x)
    out: list[Remedy] = []
    for pool, members in sorted(groups.items())[:MAX_POOLS_TRIED]:
        changes = {
            x: _with_features(by_node[x].node, wanted - (by_node[x].node.declared_features & registry))
            for x in members
        }
        r = ctx.replay(ctx.snapshot.derive(node_changes=changes), nodes=members)
        if not r.schedules:
            first = members[0]
            still = r.verdicts.get(first)
            notes.append(
                f"node-feature: not suggested for pool {pool}: declaring {feature_list}, {first} would still be blocked"
                + (f" by {still.plugin}: {still.message}" if still is not None else "")
            )
            continue
        feasible = sorted(r.feasible)
        missing = sorted(
            set().union(*(changes[x].declared_features - by_node[x].node.declared_features for x in feasible))
        )
        minors = sorted({m for x in members if (m := _kubelet_minor(by_node[x].node)) is not None})
        minor = minors[0] if minors else None
        steps, risks = [], []
        for f in missing:
            s, k = _steps(f, minor, dialect.minor)
            steps.append(f"{f}: {s}")
            if k:
                risks.append(k)
        node_word = "node" if len(members) == 1 else f"{len(members)} nodes"
        summary = (
            f"make the kubelets of pool {pool} ({node_word}) declare {', '.join(missing)}; the pod fits "
            f"{feasible[0]} once they do"
        )
        risk = (
            "a change to the nodes, not to the workload: every node of the pool is reconfigured and its kubelet "
            "restarted (a managed pool replaces its nodes), and every pod there runs with the gate on"
        )
        if risks:
            risk += "; " + "; ".join(dict.fromkeys(risks))
        gates = sorted({FEATURES[f].gate for f in missing if f in FEATURES})
        out.append(
            Remedy(
                kind="node-feature",
                summary=summary,
                plugin=n.NODE_DECLARED_FEATURES,
                reason=ctx.d.verdicts[feasible[0]].message,
                target=f"node pool {pool}",
                unblocks=feasible,
                risk=risk,
                verify=f"kubectl get node {feasible[0]} -o jsonpath='{{.status.declaredFeatures}}'  # lists "
                + ", ".join(missing),
                apply_note="; ".join(steps)
                + " (KubeletConfiguration featureGates, or the pool's node configuration on a managed service); "
                "the kubelet then lists the feature in status.declaredFeatures and the scheduler retries the pod",
                rollback="# set the kubelet feature gate(s) back"
                + (f" ({', '.join(g + '=false' for g in gates)})" if gates else "")
                + " and restart the pool's kubelets",
                safety=RISKY,
                change_size=float(len(members)),
                details={
                    "pool": pool,
                    "nodes": members,
                    "features": missing,
                    "kubelet_minor": minor,
                    "declared_elsewhere": declaring,
                },
            )
        )
    return out, notes


def _grouped(nodes: list[str], pool_of: dict[str, str]) -> str:
    """`pool a: n1, n2; pool b: n3` for a note (at most 3 names per pool)."""
    groups: dict[str, list[str]] = {}
    for x in nodes:
        groups.setdefault(pool_of.get(x, x), []).append(x)
    parts = []
    for pool, members in sorted(groups.items()):
        shown = ", ".join(members[:3]) + (f", +{len(members) - 3}" if len(members) > 3 else "")
        parts.append(f"pool {pool}: {shown}")
    return "; ".join(parts)
