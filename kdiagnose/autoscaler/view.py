"""What the snapshot says about the cluster's autoscalers, joined with kdiagnose's node pools.

Built once per snapshot from the objects the input holds (offline: the dump; live: what load/cluster.py
fetched): cluster-autoscaler's status ConfigMap (status.py), Karpenter's NodePools and NodeClaims
(karpenter.py). `evidence_for` answers the scale-up question per pool: can the autoscaler add a node of
this pool now, and if not, why (group at max, backoff, unhealthy, NodePool limit, no autoscaler at all)?
Pure; nothing here changes a scheduling verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kdiagnose.autoscaler.karpenter import (
    NODEPOOL_LABEL,
    Judgement,
    KNodeClaim,
    KNodePool,
    judge,
    parse_nodeclaim,
    parse_nodepool,
)
from kdiagnose.autoscaler.status import CAStatus, GroupStatus, find_status_configmap, parse_status_configmap

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node, Pod
    from kdiagnose.model.pools import NodePool
    from kdiagnose.model.snapshot import Snapshot

__all__ = [
    "AutoscalerView",
    "Evidence",
    "evidence_for",
    "group_failure_events",
    "view_for",
]

Obj = dict[str, Any]
CA_STATUS = "cluster-autoscaler status"
_VIEW_KEY = "autoscaler/view"


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[-_./:]+", text.lower()) if t]


def _has_run(hay: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def _in_provider_id(node: Node, group: GroupStatus) -> bool:
    """The node's providerID names the group: Azure's names the scale set
    (.../virtualMachineScaleSets/aks-apps-123-vmss/virtualMachines/0), GCE's the instance, named after its
    managed instance group (gke-c-apps-1a2b-grp -> instances gke-c-apps-1a2b-xxxx)."""
    pid = node.provider_id.lower()
    if not pid:
        return False
    short = group.short_name.lower()
    if f"/{short}/" in pid + "/":
        return True
    base = short[: -len("-grp")] if short.endswith("-grp") else ""
    return bool(base) and pid.rsplit("/", 1)[-1].startswith(base + "-")


@dataclass(slots=True)
class Evidence:
    """Whether an autoscaler can add a node of one pool, from the snapshot's own objects."""

    source: str  # "cluster-autoscaler" | "karpenter" | "pools-file" | "" (no autoscaler evidence)
    group: str  # the CA node group id, the NodePool name, or the pool name
    current: int | None = None  # nodes now (CA: cloudProviderTarget)
    max: int | None = None
    blocked: str = ""  # why the autoscaler will not add the node now ("" = it can)
    kind: str = ""  # "" | "none" | "max" | "backoff" | "unhealthy" | "limit" | "unmanaged" | "incompatible"
    status: GroupStatus | None = None
    nodepool: KNodePool | None = None
    judgement: Judgement | None = None

    @property
    def can_add(self) -> bool:
        return bool(self.source) and not self.blocked

    def room_text(self, pool: str, count: int = 1) -> str:
        """ "group apps: 2 of 3 → 3" (current of max → after), or the NodePool's limit room."""
        if self.source == "karpenter" and self.nodepool is not None:
            np = self.nodepool
            if not np.limits:
                return f"NodePool {np.name} (no limits)"
            left = ", ".join(f"{k} {_fmt(k, v)} left" for k, v in sorted(np.remaining().items()))
            return f"NodePool {np.name}: {left}"
        if self.current is None or self.max is None:
            return f"group {pool}"
        if self.current >= self.max:
            return f"group {pool}: {self.current} of {self.max} (at its max)"
        return f"group {pool}: {self.current} of {self.max} → {min(self.current + count, self.max)}"


def _fmt(resource: str, v: int) -> str:
    if resource == "cpu":
        return f"{v / 1000:g}"
    if resource == "memory" and v % (1 << 30) == 0:
        return f"{v >> 30}Gi"
    return str(v)


@dataclass(slots=True)
class AutoscalerView:
    ca: CAStatus | None = None
    ca_note: str = ""  # why the status was not read ("not checked: ...") or could not be parsed
    nodepools: list[KNodePool] = field(default_factory=list)
    nodeclaims: list[KNodeClaim] = field(default_factory=list)
    karpenter_note: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def has_evidence(self) -> bool:
        return self.ca is not None or bool(self.nodepools)

    def nodepool(self, name: str) -> KNodePool | None:
        return next((p for p in self.nodepools if p.name == name), None)

    def groups_for(self, pool: NodePool, pools: list[NodePool]) -> list[GroupStatus]:
        """The CA node groups that hold this pool's nodes: by providerID, else by the pool's name appearing
        in the group id as whole words (eks-apps-<uuid>, gke-prod-apps-1a2b-grp, aks-apps-123-vmss); a group
        named by several pools goes to the longest name (apps-gpu before apps)."""
        if self.ca is None:
            return []
        out: list[GroupStatus] = []
        for g in self.ca.groups:
            if any(_in_provider_id(ni.node, g) for ni in pool.members):
                out.append(g)
                continue
            name = pool.name.split("=", 1)[-1]
            if g.name == name or g.short_name == name:
                out.append(g)
                continue
            mine = _tokens(name)
            hay = _tokens(g.short_name)
            if not _has_run(hay, mine):
                continue
            rivals = [
                p
                for p in pools
                if p is not pool
                and len(_tokens(p.name.split("=", 1)[-1])) > len(mine)
                and _has_run(hay, _tokens(p.name.split("=", 1)[-1]))
            ]
            if not rivals:
                out.append(g)
        return out


def _parse_all(snapshot: Snapshot) -> AutoscalerView:
    view = AutoscalerView()
    # What the live read could not read (set where it built the snapshot: load/cluster.py, Snapshot.unreadable).
    unreadable = snapshot.unreadable
    if CA_STATUS in unreadable:
        view.ca_note = f"not checked: {CA_STATUS} ({unreadable[CA_STATUS]})"
    else:
        cm = find_status_configmap(snapshot.kind("ConfigMap"))
        if cm is not None:
            try:
                view.ca = parse_status_configmap(cm)
            except ValueError as e:
                view.ca_note = f"not checked: {CA_STATUS} unreadable: {e}"
    if "NodePool" in unreadable or "NodeClaim" in unreadable:
        what = "NodePool" if "NodePool" in unreadable else "NodeClaim"
        view.karpenter_note = f"not checked: Karpenter {what}s ({unreadable[what]})"
    for obj in snapshot.kind("NodePool"):
        if str(obj.get("apiVersion", "karpenter.sh/v1")).startswith("karpenter.sh/"):
            np = parse_nodepool(obj)
            if np.name:
                view.nodepools.append(np)
    view.nodepools.sort(key=lambda p: (-p.weight, p.name))  # Karpenter tries higher weights first
    for obj in snapshot.kind("NodeClaim"):
        nc = parse_nodeclaim(obj)
        if nc.name:
            view.nodeclaims.append(nc)
    view.nodeclaims.sort(key=lambda c: c.name)
    return view


def view_for(snapshot: Snapshot) -> AutoscalerView:
    """The autoscaler view of the snapshot, parsed once (kept in snapshot.cache)."""
    v: AutoscalerView | None = snapshot.cache.get(_VIEW_KEY)
    if v is None:
        v = _parse_all(snapshot)
        snapshot.cache[_VIEW_KEY] = v
    return v


def _members_size(pool: NodePool) -> dict[str, int]:
    """The smallest member's allocatable per resource: the size a limit check assumes for a new node."""
    out: dict[str, int] = {}
    for ni in pool.members:
        for k, v in ni.node.allocatable.items():
            out[k] = min(out.get(k, v), v)
    return {k: v for k, v in out.items() if k in ("cpu", "memory")}


def _pick(groups: list[GroupStatus]) -> GroupStatus:
    """A group the autoscaler can grow, else the first blocked one (by name: deterministic)."""
    groups = sorted(groups, key=lambda g: g.name)
    return next((g for g in groups if not g.blocked()), groups[0])


def _ca_kind(g: GroupStatus) -> str:
    if g.scale_up == "Backoff":
        return "backoff"
    if g.health == "Unhealthy" or g.scale_up == "Unhealthy":
        return "unhealthy"
    return "max" if g.room <= 0 else ""


def evidence_for(snapshot: Snapshot, pool: NodePool, pod: Pod, pools: list[NodePool]) -> Evidence:
    """Whether the snapshot shows an autoscaler that can add a node of `pool` for `pod`.

    Order: a `--pools` entry with a max (the user's word overrides), the cluster-autoscaler status, a
    Karpenter NodePool; else no evidence."""
    spec = pool.spec
    if spec is not None and spec.max is not None:
        current = spec.current if spec.current is not None else len(pool.members)
        blocked = f"at its max size ({current} of max {spec.max}, --pools)" if current >= spec.max else ""
        return Evidence("pools-file", pool.name, current, spec.max, blocked, "max" if blocked else "")
    view = view_for(snapshot)
    np_name = pool.name.split("=", 1)[-1] if pool.source in (NODEPOOL_LABEL, "file") else ""
    nodepool = view.nodepool(np_name) if np_name else None
    if nodepool is not None:
        j = judge(nodepool, pod, _members_size(pool))
        ev = Evidence("karpenter", nodepool.name, nodepool=nodepool, judgement=j)
        if not j.admits:
            ev.blocked = f"Karpenter: {j.message}"
            ev.kind = "limit" if j.kind == "limit" else "incompatible"
        elif nodepool.ready == "False":
            ev.blocked = f"NodePool {nodepool.name} is not Ready" + (
                f" ({nodepool.ready_message})" if nodepool.ready_message else ""
            )
            ev.kind = "unhealthy"
        return ev
    if view.ca is not None:
        groups = view.groups_for(pool, pools)
        if not groups:
            return Evidence(
                "cluster-autoscaler",
                pool.name,
                blocked=f"no node group in the {CA_STATUS} ({view.ca.source}) holds this pool: "
                "cluster-autoscaler does not manage it",
                kind="unmanaged",
            )
        g = _pick(groups)
        return Evidence(
            "cluster-autoscaler",
            g.name,
            g.cloud_provider_target,
            g.max_size,
            g.blocked(),
            _ca_kind(g),
            status=g,
        )
    why = view.ca_note or view.karpenter_note
    text = (
        f"no autoscaler evidence for pool {pool.name}: the input has no {CA_STATUS} ConfigMap"
        " (kube-system/cluster-autoscaler-status), no Karpenter NodePool for it, and no --pools entry with a max"
    )
    if why:
        text += f" ({why})"
    return Evidence("", pool.name, blocked=text, kind="none")


# ---------------------------------------------------------------------------------------------- events

_EVENTS_KEY = "autoscaler/pod-events"
_NOW_KEY = "autoscaler/snapshot-time"


def pod_event_objects(snapshot: Snapshot, pod: Pod) -> list[Obj]:
    """Every Event in the input about this pod (same namespace/name; same uid when both have one)."""
    idx: dict[str, list[Obj]] | None = snapshot.cache.get(_EVENTS_KEY)
    if idx is None:
        idx = {}
        for ev in snapshot.kind("Event"):
            reg = ev.get("regarding") if isinstance(ev.get("regarding"), dict) else ev.get("involvedObject")
            if not isinstance(reg, dict) or reg.get("kind", "Pod") != "Pod":
                continue
            meta = ev.get("metadata")
            ns = (
                reg.get("namespace")
                or (meta.get("namespace") if isinstance(meta, dict) else None)
                or "default"
            )
            idx.setdefault(f"{ns}/{reg.get('name')}", []).append(ev)
        snapshot.cache[_EVENTS_KEY] = idx
    return [ev for ev in idx.get(pod.key, []) if not pod.uid or _event_uid(ev) in ("", pod.uid)]


def _event_uid(ev: Obj) -> str:
    reg = ev.get("regarding") if isinstance(ev.get("regarding"), dict) else ev.get("involvedObject")
    return str(reg.get("uid") or "") if isinstance(reg, dict) else ""


# Events cluster-autoscaler's LogRecorder writes on its status ConfigMap about a group's failed scale-ups
# (clusterstate.go ScaleUpFailed/ScaleUpTimedOut, scaleup/orchestrator/executor.go FailedToScaleUpGroup).
CA_GROUP_FAILURES = ("ScaleUpFailed", "ScaleUpTimedOut", "FailedToScaleUpGroup")


def group_failure_events(snapshot: Snapshot, group: str) -> list[str]:
    """ "<reason>: <message>" of the status ConfigMap's failed-scale-up events naming `group`, newest first."""
    from kdiagnose.autoscaler.events import event_view

    found: list[tuple[float, str]] = []
    for ev in snapshot.kind("Event"):
        reg = ev.get("regarding") if isinstance(ev.get("regarding"), dict) else ev.get("involvedObject")
        if not isinstance(reg, dict) or reg.get("kind") != "ConfigMap":
            continue
        reason, message, _, when, _, _, _ = event_view(ev)
        if reason in CA_GROUP_FAILURES and group in message:
            found.append((when or 0.0, f"{reason}: {message}"))
    found.sort(key=lambda t: (-t[0], t[1]))
    return [t for _, t in found]


def snapshot_now(snapshot: Snapshot) -> float | None:
    """When an offline snapshot was taken, from its own timestamps (events.snapshot_time)."""
    from kdiagnose.autoscaler.events import snapshot_time

    if _NOW_KEY not in snapshot.cache:
        view = view_for(snapshot)
        snapshot.cache[_NOW_KEY] = snapshot_time(
            snapshot.kind("Event"),
            ({"status": {"conditions": ni.node.conditions}} for ni in snapshot.node_infos),
            [view.ca.time] if view.ca is not None else [],
        )
    t: float | None = snapshot.cache[_NOW_KEY]
    return t
