"""Factories for the PodTopologySpread and InterPodAffinity tests: labelled pods and nodes, snapshots, runs."""

from __future__ import annotations

from typing import Any

from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.scheduler.framework import Code, CycleState, Handle, Plugin, Status
from kdiagnose.versions import dialect_for

V134 = dialect_for("v1.34.1")
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def mk_node(
    name: str,
    zone: str | None = None,
    taints: list[dict[str, str]] | None = None,
    labels: dict[str, str] | None = None,
) -> Node:
    lbl = {HOST: name, **(labels or {})}
    if zone is not None:
        lbl[ZONE] = zone
    return Node({"metadata": {"name": name, "labels": lbl}, "spec": {"taints": taints or []}, "status": {}})


def mk_pod(
    name: str,
    node: str = "",
    labels: dict[str, str] | None = None,
    namespace: str = "default",
    terminating: bool = False,
    owner: dict[str, Any] | None = None,
    **spec: Any,
) -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {}}
    if terminating:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    if owner:
        meta["ownerReferences"] = [{"controller": True, **owner}]
    body = {"containers": [{"name": "c"}], **spec}
    if node:
        body["nodeName"] = node
    return Pod({"metadata": meta, "spec": body, "status": {"phase": "Running" if node else "Pending"}})


def mk_snapshot(
    nodes: list[Node], pods: list[Pod], objects: dict[str, list[dict[str, Any]]] | None = None
) -> Snapshot:
    objs = objects or {}
    return Snapshot(V134, nodes, pods, objs, present=objs.keys())


def plugin(cls: type[Plugin], snap: Snapshot, args: dict[str, Any] | None = None) -> Plugin:
    return cls(Handle(snap, snap.dialect, args or {}))


def filter_all(pl: Plugin, pod: Pod) -> tuple[Status, dict[str, Status]]:
    """PreFilter, then Filter on every node (only if PreFilter neither skipped nor failed)."""
    state = CycleState()
    _, pre = pl.pre_filter(state, pod)
    if pre.code != Code.SUCCESS:
        return pre, {}
    return pre, {ni.name: pl.filter(state, pod, ni) for ni in pl.snapshot.node_infos}


def verdicts(statuses: dict[str, Status]) -> dict[str, str]:
    """node -> "ok" or "<Code label>: <reasons>"."""
    return {n: "ok" if s.ok else f"{s.code.label}: {s.message}" for n, s in statuses.items()}


def scores(pl: Plugin, pod: Pod, nodes: list[str] | None = None) -> dict[str, int] | None:
    """PreScore/Score/NormalizeScore over the named nodes (default: all); None when PreScore skips."""
    state = CycleState()
    infos = [ni for ni in pl.snapshot.node_infos if nodes is None or ni.name in nodes]
    if pl.pre_score(state, pod, infos).code == Code.SKIP:
        return None
    raw = {ni.name: pl.score(state, pod, ni)[0] for ni in infos}
    pl.normalize_score(state, pod, raw)
    return raw
