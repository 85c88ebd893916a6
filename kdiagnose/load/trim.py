"""Drop what the scheduler never reads from Pods and Nodes, as soon as each object is parsed.

A 150,000-pod dump is ~1 GB of JSON, mostly env, probes, mounts, managedFields and container statuses.
Keeping only scheduler-relevant fields bounds memory to a fraction of the file, and is also what
`--save-snapshot` strips by default (env and args may hold secrets).
"""

from __future__ import annotations

from typing import Any

__all__ = ["POD_CONDITIONS", "trim_node", "trim_object", "trim_pod", "volume_is_relevant"]

Obj = dict[str, Any]

_POD_META = (
    "name",
    "namespace",
    "uid",
    "labels",
    "ownerReferences",
    "creationTimestamp",
    "deletionTimestamp",
    "generateName",
)
_POD_SPEC = (
    "nodeName",
    "schedulerName",
    "priority",
    "priorityClassName",
    "preemptionPolicy",
    "runtimeClassName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "hostNetwork",
    "hostUsers",
    "overhead",
    "resources",
    "schedulingGates",
    "resourceClaims",
)
_CONTAINER = ("name", "image", "resources", "ports", "restartPolicy", "restartPolicyRules")
# Volume sources no scheduler plugin reads (VolumeRestrictions, NodeVolumeLimits with its in-tree
# translation, VolumeBinding and VolumeZone read claims, ephemeral volumes and the disk types); every other
# volume is kept whole, so a source added to a plugin later is not silently trimmed away.
_IRRELEVANT_VOLUME_SOURCES = frozenset({"configMap", "secret", "projected", "emptyDir", "downwardAPI"})
_POD_STATUS = (
    "phase",
    "startTime",
    "nominatedNodeName",
    "conditions",
    "resourceClaimStatuses",
    "resize",
    "reason",
    "message",
)
POD_CONDITIONS = frozenset({"PodScheduled", "PodResizePending", "PodResizeInProgress", "DisruptionTarget"})
# Annotations kept: small ones tools read; last-applied-configuration alone can double a pod's size.
_DROP_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def _pick(d: Any, keys: tuple[str, ...]) -> Obj:
    if not isinstance(d, dict):
        return {}
    return {k: d[k] for k in keys if k in d}


def _annotations(meta: Obj) -> Obj | None:
    ann = meta.get("annotations")
    if not isinstance(ann, dict) or not ann:
        return None
    return {k: v for k, v in ann.items() if k not in _DROP_ANNOTATIONS}


def volume_is_relevant(volume: Any) -> bool:
    """False only for a volume whose source is one no plugin reads (configMap, secret, projected, ...)."""
    if not isinstance(volume, dict):
        return True
    sources = volume.keys() - {"name"}
    return not sources or not sources <= _IRRELEVANT_VOLUME_SOURCES


def _container(c: Any) -> Obj:
    out = _pick(c, _CONTAINER)
    mounts = c.get("volumeMounts") if isinstance(c, dict) else None
    if isinstance(mounts, list):
        # Only bindMountOptions matters (NodeDeclaredFeatures infers VolumeBindMountOptions from it).
        kept = [
            _pick(m, ("name", "bindMountOptions"))
            for m in mounts
            if isinstance(m, dict) and m.get("bindMountOptions")
        ]
        if kept:
            out["volumeMounts"] = kept
    return out


def trim_pod(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    new_meta = _pick(meta, _POD_META)
    ann = _annotations(meta) if isinstance(meta, dict) else None
    if ann:
        new_meta["annotations"] = ann
    spec = obj.get("spec") or {}
    new_spec = _pick(spec, _POD_SPEC)
    for key in ("containers", "initContainers"):
        cs = spec.get(key) if isinstance(spec, dict) else None
        if isinstance(cs, list):
            new_spec[key] = [_container(c) for c in cs]
    vols = spec.get("volumes") if isinstance(spec, dict) else None
    if isinstance(vols, list):
        kept = [v for v in vols if volume_is_relevant(v)]
        if kept:
            new_spec["volumes"] = kept
    status = obj.get("status") or {}
    new_status = _pick(status, _POD_STATUS)
    conds = new_status.get("conditions")
    if isinstance(conds, list):
        new_status["conditions"] = [
            c for c in conds if isinstance(c, dict) and c.get("type") in POD_CONDITIONS
        ]
    # initContainerStatuses: sidecars' in-place resize status counts toward requests.
    for status_key in ("containerStatuses", "initContainerStatuses"):
        statuses = status.get(status_key) if isinstance(status, dict) else None
        if not isinstance(statuses, list):
            continue
        slim = []
        for cs in statuses:
            if not isinstance(cs, dict):
                continue
            s = _pick(cs, ("name", "resources", "allocatedResources", "ready", "restartCount"))
            waiting = (cs.get("state") or {}).get("waiting") if isinstance(cs.get("state"), dict) else None
            if isinstance(waiting, dict):
                s["state"] = {"waiting": _pick(waiting, ("reason", "message"))}
            slim.append(s)
        new_status[status_key] = slim
    return {
        "apiVersion": obj.get("apiVersion", "v1"),
        "kind": "Pod",
        "metadata": new_meta,
        "spec": new_spec,
        "status": new_status,
    }


def trim_node(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    # Node annotations are kept whole: the Node model reads them all (nodes are few).
    new_meta = _pick(meta, ("name", "uid", "labels", "annotations", "creationTimestamp"))
    spec = _pick(obj.get("spec"), ("unschedulable", "taints", "providerID"))
    status = obj.get("status") or {}
    new_status = _pick(status, ("capacity", "allocatable", "conditions", "nodeInfo", "declaredFeatures"))
    images = status.get("images") if isinstance(status, dict) else None
    if isinstance(images, list):
        new_status["images"] = [_pick(i, ("names", "sizeBytes")) for i in images]
    return {
        "apiVersion": obj.get("apiVersion", "v1"),
        "kind": "Node",
        "metadata": new_meta,
        "spec": spec,
        "status": new_status,
    }


def trim_object(obj: Obj) -> Obj:
    """Trim Pods and Nodes; other kinds are small and kept whole."""
    kind = obj.get("kind")
    if kind == "Pod":
        return trim_pod(obj)
    if kind == "Node":
        return trim_node(obj)
    return obj
