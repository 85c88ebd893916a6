"""Small factories for the volume plugin tests: pods with volumes, nodes, and storage objects as raw dicts."""

from __future__ import annotations

from typing import Any

from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.scheduler.framework import SUCCESS, CycleState, Handle, Plugin, Status
from kdiagnose.versions import Dialect, dialect_for

V134 = dialect_for("v1.34.1")
V133 = dialect_for("v1.33.3")
V132 = dialect_for("v1.32.2")
V131 = dialect_for("v1.31.8")

Obj = dict[str, Any]


def pvc_vol(claim: str, name: str = "data") -> Obj:
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


def eph_vol(name: str = "scratch") -> Obj:
    return {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


def pod(
    name: str = "p", *, volumes: list[Obj] | None = None, node: str = "", uid: str = "", ns: str = "default"
) -> Pod:
    spec: Obj = {"containers": [{"name": "c", "image": "i"}], "volumes": volumes or []}
    if node:
        spec["nodeName"] = node
    return Pod({"metadata": {"name": name, "namespace": ns, "uid": uid or f"uid-{name}"}, "spec": spec})


def node(
    name: str = "n1", labels: dict[str, str] | None = None, allocatable: dict[str, str] | None = None
) -> Node:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110", **(allocatable or {})}
    return Node({"metadata": {"name": name, "labels": labels or {}}, "status": {"allocatable": alloc}})


def pvc(
    name: str,
    *,
    sc: str | None = "sc",
    volume: str = "",
    bound: bool = False,
    modes: list[str] | None = None,
    storage: str = "10Gi",
    phase: str = "",
    deleting: bool = False,
    annotations: dict[str, str] | None = None,
    owner_uid: str = "",
    selector: Obj | None = None,
) -> Obj:
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    meta: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}", "annotations": ann}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    if owner_uid:
        meta["ownerReferences"] = [{"kind": "Pod", "name": "x", "uid": owner_uid, "controller": True}]
    spec: Obj = {"accessModes": modes or ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
    if sc is not None:
        spec["storageClassName"] = sc
    if volume:
        spec["volumeName"] = volume
    if selector is not None:
        spec["selector"] = selector
    out: Obj = {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}
    if phase:
        out["status"] = {"phase": phase}
    return out


def pv(
    name: str,
    *,
    sc: str = "sc",
    storage: str = "10Gi",
    phase: str = "Available",
    modes: list[str] | None = None,
    zone_in: list[str] | None = None,
    labels: dict[str, str] | None = None,
    claim: str = "",
    source: Obj | None = None,
) -> Obj:
    spec: Obj = {
        "storageClassName": sc,
        "capacity": {"storage": storage},
        "accessModes": modes or ["ReadWriteOnce"],
        **(
            source
            if source is not None
            else {"csi": {"driver": "csi.example.com", "volumeHandle": f"h-{name}"}}
        ),
    }
    if zone_in is not None:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": zone_in}
                        ]
                    }
                ]
            }
        }
    if claim:
        spec["claimRef"] = {"name": claim, "namespace": "default"}
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {"phase": phase},
    }


def storage_class(
    name: str = "sc",
    *,
    mode: str | None = "WaitForFirstConsumer",
    provisioner: str = "csi.example.com",
    zones: list[str] | None = None,
) -> Obj:
    sc: Obj = {"kind": "StorageClass", "metadata": {"name": name}, "provisioner": provisioner}
    if mode is not None:
        sc["volumeBindingMode"] = mode
    if zones is not None:
        sc["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": zones}]}
        ]
    return sc


def csinode(name: str, limits: dict[str, int], migrated: str = "") -> Obj:
    meta: Obj = {"name": name}
    if migrated:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    drivers = [{"name": d, "nodeID": name, "allocatable": {"count": c}} for d, c in limits.items()]
    return {"kind": "CSINode", "metadata": meta, "spec": {"drivers": drivers}}


def snapshot(
    nodes: list[Node],
    pods: list[Pod] | None = None,
    objects: list[Obj] | None = None,
    dialect: Dialect = V134,
) -> Snapshot:
    by_kind: dict[str, list[Obj]] = {}
    for o in objects or []:
        by_kind.setdefault(str(o["kind"]), []).append(o)
    return Snapshot(dialect, nodes, pods or [], by_kind, present=by_kind)


def run(plugin: Plugin, p: Pod) -> tuple[CycleState, Status, dict[str, Status]]:
    """PreFilter, then (unless it rejected or skipped) Filter on every node."""
    state = CycleState()
    _, pre = plugin.pre_filter(state, p)
    per_node: dict[str, Status] = {}
    if pre.ok:
        for ni in plugin.snapshot.node_infos:
            per_node[ni.name] = plugin.filter(state, p, ni)
    return state, pre, per_node


def verdicts(per_node: dict[str, Status]) -> dict[str, str]:
    """node -> "ok" or the reasons joined, for compact expectations."""
    return {n: "ok" if s == SUCCESS or s.ok else ", ".join(s.reasons) for n, s in per_node.items()}


def make(cls: type[Plugin], snap: Snapshot) -> Plugin:
    return cls(Handle(snap, snap.dialect, {}))
