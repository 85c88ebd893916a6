"""Workload manifests -> the pods (and PVCs) their controllers would create (the CI gate's input).

Mirrors what the controllers put in a pod: the template, generated names, owner references, the labels
StatefulSet/DaemonSet controllers add, StatefulSet claims from volumeClaimTemplates, and the node
affinity and tolerations the DaemonSet controller adds (pkg/controller/daemon/util).
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Any

from kdiagnose.load.files import RawObject

__all__ = ["WORKLOAD_KINDS", "Workload", "expand_workloads"]

Obj = dict[str, Any]

WORKLOAD_KINDS = ("Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicationController")
IGNORE_ANNOTATION = "kdiagnose.io/ignore"

# pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations
_DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]
_DAEMON_HOSTNET_TOLERATION = {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}


@dataclass(slots=True)
class Workload:
    """One manifest and the replicas it asks for, in creation order."""

    kind: str
    namespace: str
    name: str
    source: str
    line: int
    doc_index: int
    pods: list[Obj] = field(default_factory=list)
    claims: list[Obj] = field(default_factory=list)  # PVCs a StatefulSet would create
    owners: list[Obj] = field(default_factory=list)  # synthetic ReplicaSet/StatefulSet objects for spreading
    ignored: bool = False
    per_node: bool = False  # DaemonSet: one pod per targeted node (pods filled by the gate per node)
    template: Obj = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


def _meta(obj: Obj) -> Obj:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def _hash(text: str, n: int = 10) -> str:
    # A stable stand-in for the pod-template-hash: same template, same name, so CI diffs are stable.
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def _pod_from_template(template: Obj, namespace: str, name: str, owner: Obj | None, extra_labels: Obj | None = None) -> Obj:
    t = copy.deepcopy(template) if isinstance(template, dict) else {}
    meta = t.get("metadata") if isinstance(t.get("metadata"), dict) else {}
    labels = dict(meta.get("labels") or {})
    if extra_labels:
        labels.update(extra_labels)
    pod_meta: Obj = {"name": name, "namespace": namespace, "labels": labels}
    if meta.get("annotations"):
        pod_meta["annotations"] = dict(meta["annotations"])
    if owner is not None:
        pod_meta["ownerReferences"] = [owner]
    spec = t.get("spec") if isinstance(t.get("spec"), dict) else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec, "status": {"phase": "Pending"}}


def _owner(kind: str, api_version: str, name: str) -> Obj:
    return {"apiVersion": api_version, "kind": kind, "name": name, "controller": True, "uid": _hash(f"{kind}/{name}", 32)}


def _int(v: Any, default: int) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _replica_set(namespace: str, name: str, spec: Obj, template: Obj) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": spec.get("selector") or {}, "template": template},
    }


def _expand(raw: RawObject) -> Workload | None:
    obj = raw.obj
    kind = obj.get("kind")
    if kind not in WORKLOAD_KINDS:
        return None
    meta = _meta(obj)
    ns = str(meta.get("namespace") or "default")
    name = str(meta.get("name") or "")
    w = Workload(str(kind), ns, name, raw.source, raw.line, raw.doc_index)
    annotations = meta.get("annotations") or {}
    w.ignored = str(annotations.get(IGNORE_ANNOTATION, "")).lower() == "true"
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if kind == "Pod":
        pod = copy.deepcopy(obj)
        pod.setdefault("metadata", {})["namespace"] = ns
        pod["status"] = {"phase": "Pending"}
        if isinstance(pod.get("spec"), dict):
            pod["spec"].pop("nodeName", None)
        w.pods.append(pod)
        return w
    if kind == "CronJob":
        job_tmpl = spec.get("jobTemplate") if isinstance(spec.get("jobTemplate"), dict) else {}
        spec = job_tmpl.get("spec") if isinstance(job_tmpl.get("spec"), dict) else {}
        kind = "Job"
        name = f"{name}-{_hash(name, 8)}"
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    w.template = template
    if kind in ("Deployment", "ReplicaSet", "ReplicationController"):
        replicas = _int(spec.get("replicas"), 1)
        if kind == "Deployment":
            rs_name = f"{name}-{_hash(repr(sorted(str(template).split())), 10)}"
            w.owners.append(_replica_set(ns, rs_name, spec, template))
            owner = _owner("ReplicaSet", "apps/v1", rs_name)
            base = rs_name
            extra = {"pod-template-hash": rs_name.rsplit("-", 1)[1]}
        else:
            owner = _owner(str(kind), "apps/v1" if kind == "ReplicaSet" else "v1", name)
            base = name
            extra = {}
            if kind == "ReplicaSet":
                w.owners.append(_replica_set(ns, name, spec, template))
            else:
                w.owners.append({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name, "namespace": ns}, "spec": {"selector": spec.get("selector") or {}}})
        for i in range(replicas):
            w.pods.append(_pod_from_template(template, ns, f"{base}-{_hash(f'{base}/{i}', 5)}", owner, extra))
        return w
    if kind == "StatefulSet":
        replicas = _int(spec.get("replicas"), 1)
        owner = _owner("StatefulSet", "apps/v1", name)
        w.owners.append({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": ns}, "spec": {"selector": spec.get("selector") or {}}})
        vcts = [v for v in spec.get("volumeClaimTemplates") or [] if isinstance(v, dict)]
        for i in range(replicas):
            pod_name = f"{name}-{i}"
            pod = _pod_from_template(
                template, ns, pod_name, owner, {"statefulset.kubernetes.io/pod-name": pod_name, "apps.kubernetes.io/pod-index": str(i)}
            )
            vols = pod["spec"].setdefault("volumes", [])
            for vct in vcts:
                vname = str(_meta(vct).get("name") or "data")
                claim = f"{vname}-{pod_name}"
                vols[:] = [v for v in vols if not (isinstance(v, dict) and v.get("name") == vname)]
                vols.append({"name": vname, "persistentVolumeClaim": {"claimName": claim}})
                w.claims.append(
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {"name": claim, "namespace": ns, "labels": dict(_meta(vct).get("labels") or {})},
                        "spec": copy.deepcopy(vct.get("spec") or {}),
                        "status": {"phase": "Pending"},
                    }
                )
            w.pods.append(pod)
        return w
    if kind == "DaemonSet":
        w.per_node = True
        return w
    if kind == "Job":
        parallelism = _int(spec.get("parallelism"), 1)
        completions = spec.get("completions")
        n = min(parallelism, completions) if isinstance(completions, int) and not isinstance(completions, bool) else parallelism
        owner = _owner("Job", "batch/v1", name)
        for i in range(max(n, 0)):
            w.pods.append(_pod_from_template(template, ns, f"{name}-{_hash(f'{name}/{i}', 5)}", owner, {"job-name": name}))
        return w
    return w


def daemon_pod_for_node(w: Workload, node_name: str) -> Obj:
    """The pod the DaemonSet controller creates for one node: pinned by matchFields, with its tolerations."""
    owner = _owner("DaemonSet", "apps/v1", w.name)
    pod = _pod_from_template(w.template, w.namespace, f"{w.name}-{_hash(f'{w.name}/{node_name}', 5)}", owner)
    spec = pod["spec"]
    affinity = spec.setdefault("affinity", {})
    na = affinity.setdefault("nodeAffinity", {})
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    pin = {"key": "metadata.name", "operator": "In", "values": [node_name]}
    if isinstance(req, dict) and req.get("nodeSelectorTerms"):
        # ReplaceDaemonSetPodNodeNameNodeAffinity: each term keeps its expressions; matchFields is replaced.
        for term in req["nodeSelectorTerms"]:
            if isinstance(term, dict):
                term["matchFields"] = [pin]
    else:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [{"matchFields": [pin]}]}
    tolerations = list(spec.get("tolerations") or [])
    wanted = list(_DAEMON_TOLERATIONS) + ([_DAEMON_HOSTNET_TOLERATION] if spec.get("hostNetwork") else [])
    for t in wanted:
        if not any(isinstance(x, dict) and x.get("key") == t["key"] and x.get("effect") == t["effect"] for x in tolerations):
            tolerations.append(dict(t))
    spec["tolerations"] = tolerations
    return pod


def expand_workloads(objects: list[RawObject]) -> tuple[list[Workload], dict[str, int]]:
    """Workloads in input order, and the count of other kinds that were ignored (e.g. Service, ConfigMap)."""
    out: list[Workload] = []
    other: dict[str, int] = {}
    for raw in objects:
        w = _expand(raw)
        if w is None:
            k = str(raw.obj.get("kind") or "<no kind>")
            other[k] = other.get(k, 0) + 1
            continue
        out.append(w)
    return out, other
