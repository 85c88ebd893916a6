"""Workload manifests -> the pods (and PVCs) their controllers would create (the CI gate's input).

Mirrors what the controllers put in a pod: the template, generated names, owner references, the labels
the StatefulSet/Deployment/Job controllers add, StatefulSet claims from volumeClaimTemplates
(pkg/controller/statefulset/stateful_set_utils.go getPersistentVolumeClaims: `<template>-<set>-<ordinal>`),
and the node affinity pin and tolerations the DaemonSet controller adds (pkg/controller/daemon/util).
Generated names use a stable hash instead of random suffixes, so CI output does not change run to run.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from kdiagnose.errors import InputError
from kdiagnose.load.raw import RawObject

# Replicas `check` places one by one: far beyond any cluster's pod capacity, and small enough that building
# them stays within seconds and memory (spec.replicas may be up to 2147483647).
MAX_REPLICAS = 10_000

__all__ = [
    "IGNORE_ANNOTATION",
    "WORKLOAD_KINDS",
    "Workload",
    "daemon_pod_for_node",
    "daemon_predicate_pod",
    "expand_workloads",
]

Obj = dict[str, Any]

WORKLOAD_KINDS = (
    "Pod",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CronJob",
    "ReplicationController",
)
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
_DAEMON_HOSTNET_TOLERATION = {
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
    "effect": "NoSchedule",
}


def _meta(obj: Any) -> Obj:
    m = obj.get("metadata") if isinstance(obj, dict) else None
    return m if isinstance(m, dict) else {}


def _dict(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _spec(obj: Any) -> Obj:
    s = obj.get("spec") if isinstance(obj, dict) else None
    return s if isinstance(s, dict) else {}


def _hash(text: str, n: int = 10) -> str:
    # A stable stand-in for random suffixes and the pod-template-hash: same input, same names.
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def _int(v: Any, default: int) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _owner(kind: str, api_version: str, namespace: str, name: str) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "controller": True,
        "blockOwnerDeletion": True,
        "uid": _hash(f"{kind}/{namespace}/{name}", 32),
    }


def _pod_from_template(
    template: Obj, namespace: str, name: str, owner: Obj | None, extra_labels: Obj | None = None
) -> Obj:
    """pkg/controller/controller_utils.go GetPodFromTemplate: labels, annotations, spec; owner reference."""
    t = copy.deepcopy(template) if isinstance(template, dict) else {}
    meta = _meta(t)
    labels = dict(meta.get("labels") or {})
    if extra_labels:
        labels.update(extra_labels)
    pod_meta: Obj = {"name": name, "namespace": namespace, "labels": labels}
    if meta.get("annotations"):
        pod_meta["annotations"] = dict(meta["annotations"])
    if owner is not None:
        pod_meta["ownerReferences"] = [dict(owner)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": _spec(t),
        "status": {"phase": "Pending"},
    }


@dataclass(slots=True)
class Workload:
    """One manifest and the replicas it asks for, in creation order.

    `pods`/`claims` are the requested replicas; `replica(i)` makes replica i (0-based) on demand, which the
    headroom loop uses past the requested count. A DaemonSet has `per_node` set and no pods: the gate
    makes one per node it targets (daemon_pod_for_node)."""

    kind: str
    namespace: str
    name: str
    source: str
    line: int
    doc_index: int
    item: int = 0  # the k-th object of its document (a List's items), for locating it
    pods: list[Obj] = field(default_factory=list)
    claims: list[Obj] = field(default_factory=list)  # PVCs a StatefulSet would create
    owners: list[Obj] = field(default_factory=list)  # synthetic ReplicaSet/StatefulSet objects for spreading
    ignored: bool = False
    per_node: bool = False
    template: Obj = field(default_factory=dict)
    selector: Obj | None = None  # spec.selector (a LabelSelector), for --replace
    replicas: int = 0
    notes: list[str] = field(default_factory=list)
    pod_manifest: Obj | None = None  # kind Pod: the manifest itself
    _base: str = ""
    _owner: Obj | None = None
    _extra: Obj = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    def replica(self, i: int) -> tuple[Obj, list[Obj]]:
        """Replica i's pod and the claims it needs (StatefulSet only)."""
        if self.kind == "Pod":
            pod = copy.deepcopy(self.pod_manifest or {})
            if i:
                pod["metadata"]["name"] = f"{self.name}-{i}"
            return pod, []
        if self.kind == "StatefulSet":
            return self._stateful_replica(i)
        name = f"{self._base}-{_hash(f'{self._base}/{i}', 5)}"
        return _pod_from_template(self.template, self.namespace, name, self._owner, self._extra), []

    def _stateful_replica(self, i: int) -> tuple[Obj, list[Obj]]:
        pod_name = f"{self.name}-{i}"
        labels = {"statefulset.kubernetes.io/pod-name": pod_name, "apps.kubernetes.io/pod-index": str(i)}
        pod = _pod_from_template(self.template, self.namespace, pod_name, self._owner, labels)
        spec = pod["spec"]
        spec.setdefault("hostname", pod_name)
        vols = spec.setdefault("volumes", [])
        claims: list[Obj] = []
        match_labels = (self.selector or {}).get("matchLabels") or {}
        for vct in self._extra.get("volumeClaimTemplates", []):
            vname = str(_meta(vct).get("name") or "data")
            claim = f"{vname}-{pod_name}"
            # updateStorage: a template volume of the same name is replaced by the claim.
            vols[:] = [v for v in vols if not (isinstance(v, dict) and v.get("name") == vname)]
            vols.append({"name": vname, "persistentVolumeClaim": {"claimName": claim}})
            labels = dict(_meta(vct).get("labels") or {})
            labels.update(match_labels if isinstance(match_labels, dict) else {})
            claims.append(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": claim, "namespace": self.namespace, "labels": labels},
                    "spec": copy.deepcopy(_spec(vct)),
                    "status": {"phase": "Pending"},
                }
            )
        return pod, claims


def _template_hash(template: Obj) -> str:
    return _hash(json.dumps(template, sort_keys=True, default=str), 10)


def _replica_set(namespace: str, name: str, selector: Obj | None, template: Obj, owner: Obj | None) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta,
        "spec": {"selector": selector or {}, "template": template},
    }


def _validate_workload(raw: RawObject) -> None:
    """The fields expansion reads, typed as the API server would decode them; the pod template as a Pod."""
    from kdiagnose.model.objects import ModelError
    from kdiagnose.model.validation import object_label, validate, validate_pod

    obj = raw.obj
    try:
        validate(obj)
        if obj.get("kind") == "Pod":
            return
        spec = _spec(obj)
        prefix = " spec."
        if obj.get("kind") == "CronJob":
            job = spec.get("jobTemplate")
            if job is not None and not isinstance(job, dict):
                raise ModelError(" spec.jobTemplate: must be a mapping")
            spec, prefix = _spec(job), " spec.jobTemplate.spec."
            validate({"kind": "Job", "spec": spec})
        template = spec.get("template")
        if template is not None:
            if not isinstance(template, dict):
                raise ModelError(f"{prefix}template: must be a mapping")
            validate_pod(template, f"{prefix}template")
        vcts = spec.get("volumeClaimTemplates")
        if vcts is not None:
            if not isinstance(vcts, list) or not all(isinstance(v, dict) for v in vcts):
                raise ModelError(f"{prefix}volumeClaimTemplates: must be a list of mappings")
            for v in vcts:
                validate({**v, "kind": "PersistentVolumeClaim"})
    except ModelError as e:
        raise InputError(f"{raw.where}: {object_label(obj)}{e}") from None


def _replicas(value: Any, raw: RawObject, field_name: str) -> int:
    n = _int(value, 1)
    if n > MAX_REPLICAS:
        raise InputError(
            f"{raw.where}: {raw.obj.get('kind')} {_meta(raw.obj).get('name')}: {field_name} {n} is more than "
            f"the {MAX_REPLICAS} replicas kdiagnose check places one by one"
        )
    return n


def _expand(raw: RawObject, default_namespace: str) -> Workload | None:
    obj = raw.obj
    kind = obj.get("kind")
    if kind not in WORKLOAD_KINDS:
        return None
    _validate_workload(raw)
    meta = _meta(obj)
    ns = str(meta.get("namespace") or default_namespace)
    name = str(meta.get("name") or "")
    if not name and meta.get("generateName"):
        name = f"{meta['generateName']}{_hash(json.dumps(obj, sort_keys=True, default=str), 5)}"
    w = Workload(str(kind), ns, name, raw.source, raw.line, raw.doc_index)
    annotations = meta.get("annotations") or {}
    w.ignored = (
        isinstance(annotations, dict) and str(annotations.get(IGNORE_ANNOTATION, "")).lower() == "true"
    )
    spec = _spec(obj)
    if kind == "Pod":
        pod = copy.deepcopy(obj)
        pod_meta = pod.setdefault("metadata", {})
        pod_meta["namespace"] = ns
        pod_meta["name"] = name
        pod["status"] = {"phase": "Pending"}
        pod_spec = _spec(pod)
        if pod_spec.get("nodeName"):
            w.notes.append(
                f"spec.nodeName {pod_spec['nodeName']} is set: such a pod bypasses the scheduler; "
                "checked as if it were unset"
            )
            pod_spec.pop("nodeName", None)
        w.pod_manifest = pod
        w.template = {"metadata": {"labels": dict(pod_meta.get("labels") or {})}, "spec": pod_spec}
        w.replicas = 1
        w.pods.append(copy.deepcopy(pod))
        return w
    if kind == "CronJob":
        spec = _spec(spec.get("jobTemplate"))
        kind = "Job"
        job_name = f"{name}-{int(_hash(name, 7), 16) % 100000000}"  # CronJob jobs: <name>-<minutes>
    else:
        job_name = name
    template = _dict(spec.get("template"))
    w.template = template
    sel = spec.get("selector")
    w.selector = sel if isinstance(sel, dict) else None
    if kind in ("Deployment", "ReplicaSet", "ReplicationController"):
        w.replicas = _replicas(spec.get("replicas"), raw, "spec.replicas")
        if kind == "Deployment":
            pth = _template_hash(template)
            rs_name = f"{name}-{pth}"
            w.owners.append(
                _replica_set(ns, rs_name, w.selector, template, _owner("Deployment", "apps/v1", ns, name))
            )
            w._owner = _owner("ReplicaSet", "apps/v1", ns, rs_name)
            w._base = rs_name
            w._extra = {"pod-template-hash": pth}
        elif kind == "ReplicaSet":
            w.owners.append(_replica_set(ns, name, w.selector, template, None))
            w._owner = _owner("ReplicaSet", "apps/v1", ns, name)
            w._base = name
        else:
            if w.selector is None:
                # An RC's selector defaults to its template's labels.
                w.selector = dict(_meta(template).get("labels") or {})
            w.owners.append(
                {
                    "apiVersion": "v1",
                    "kind": "ReplicationController",
                    "metadata": {"name": name, "namespace": ns},
                    "spec": {"selector": w.selector},
                }
            )
            w._owner = _owner("ReplicationController", "v1", ns, name)
            w._base = name
    elif kind == "StatefulSet":
        w.replicas = _replicas(spec.get("replicas"), raw, "spec.replicas")
        w._owner = _owner("StatefulSet", "apps/v1", ns, name)
        w.owners.append(
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"selector": w.selector or {}},
            }
        )
        w._extra = {
            "volumeClaimTemplates": [v for v in spec.get("volumeClaimTemplates") or [] if isinstance(v, dict)]
        }
    elif kind == "DaemonSet":
        w.per_node = True
        return w
    elif kind == "Job":
        parallelism = _replicas(spec.get("parallelism"), raw, "spec.parallelism")
        completions = spec.get("completions")
        n = parallelism
        if isinstance(completions, int) and not isinstance(completions, bool):
            n = min(parallelism, completions)
        if spec.get("suspend") is True:
            w.notes.append("the Job is suspended (spec.suspend): its pods are checked as if it were resumed")
        w.replicas = max(n, 0)
        w._owner = _owner("Job", "batch/v1", ns, job_name)
        w._base = job_name
        uid = w._owner["uid"]
        w._extra = {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": job_name,
            "controller-uid": uid,
            "job-name": job_name,
        }
    for i in range(w.replicas):
        pod, claims = w.replica(i)
        w.pods.append(pod)
        w.claims.extend(claims)
    return w


def daemon_predicate_pod(w: Workload) -> Obj:
    """daemon_controller.go NewPod: the template plus the daemon tolerations, not yet pinned to a node; what
    the controller's predicates (nodeSelector, required node affinity, taints) are evaluated on."""
    owner = _owner("DaemonSet", "apps/v1", w.namespace, w.name)
    pod = _pod_from_template(w.template, w.namespace, w.name, owner)
    spec = pod["spec"]
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    wanted = list(_DAEMON_TOLERATIONS) + ([_DAEMON_HOSTNET_TOLERATION] if spec.get("hostNetwork") else [])
    for t in wanted:
        # AddOrUpdateTolerationInPodSpec: a toleration with the same key and effect is replaced.
        tolerations = [
            x for x in tolerations if not (x.get("key") == t["key"] and x.get("effect") == t["effect"])
        ]
        tolerations.append(dict(t))
    spec["tolerations"] = tolerations
    return pod


def daemon_pod_for_node(w: Workload, node_name: str) -> Obj:
    """The pod the DaemonSet controller creates for one node: pinned by matchFields, with its tolerations."""
    pod = daemon_predicate_pod(w)
    pod["metadata"]["name"] = f"{w.name}-{_hash(f'{w.namespace}/{w.name}/{node_name}', 5)}"
    spec = pod["spec"]
    affinity = _dict(spec.get("affinity"))
    spec["affinity"] = affinity
    na = _dict(affinity.get("nodeAffinity"))
    affinity["nodeAffinity"] = na
    # ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms are replaced by the pin alone (the
    # controller's predicates already checked them); nodeSelector and preferred terms stay.
    pin = {"key": "metadata.name", "operator": "In", "values": [node_name]}
    na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [{"matchFields": [pin]}]}
    return pod


def expand_workloads(
    objects: list[RawObject], default_namespace: str = "default"
) -> tuple[list[Workload], dict[str, int]]:
    """Workloads in input order, and the count of other kinds that were ignored (e.g. Service, ConfigMap)."""
    out: list[Workload] = []
    other: dict[str, int] = {}
    per_doc: dict[tuple[str, int, int], int] = {}
    for raw in objects:
        key = (raw.source, raw.doc_index, raw.line)
        item = per_doc.get(key, 0)
        per_doc[key] = item + 1
        w = _expand(raw, default_namespace)
        if w is not None:
            w.item = item
        if w is None:
            k = str(raw.obj.get("kind") or "<no kind>")
            other[k] = other.get(k, 0) + 1
            continue
        out.append(w)
    return out, dict(sorted(other.items()))
