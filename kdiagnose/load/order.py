"""Canonical object order: what kube-scheduler's informers List, whatever order the input files have.

An informer's initial List returns objects sorted by their storage key (etcd's key order, kept by the API
server's watch cache): cluster-scoped objects by name, namespaced ones by "namespace/name", compared as
byte strings (so `node-10` precedes `node-9`, and namespace `a-b` precedes `a`). The scheduler cache adds
nodes and pods in that order, which decides ImageLocality's image sizes (the first node listing an image,
backend/cache/cache.go addNodeImageStates) and the order of a node's pods (NodeInfo.Pods, which
DefaultPreemption walks before its unstable importance sort). Sorting here makes kdiagnose independent of
the document order of its input.
"""

from __future__ import annotations

import json
from typing import Any

from kdiagnose.load.raw import RawObject

__all__ = ["CLUSTER_SCOPED_KINDS", "canonical_order", "meta_key", "object_key"]

CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Node",
        "Namespace",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "VolumeAttachment",
        "PriorityClass",
        "RuntimeClass",
        "ResourceSlice",
        "DeviceClass",
    }
)


def object_key(obj: dict[str, Any], namespaced: bool) -> str:
    """The informer cache key (MetaNamespaceKeyFunc): "namespace/name", or "name" when cluster-scoped. A
    namespaced object without a namespace lands in "default", as the API server puts it; a manifest with
    only generateName sorts by that prefix."""
    return meta_key(obj.get("metadata"), namespaced)


def meta_key(meta: Any, namespaced: bool) -> str:
    """object_key from the object's metadata."""
    if not isinstance(meta, dict):
        return ""
    name = meta.get("name") or meta.get("generateName") or ""
    name = name if isinstance(name, str) else str(name)
    if not namespaced:
        return name
    ns = meta.get("namespace") or "default"
    return f"{ns if isinstance(ns, str) else str(ns)}/{name}"


def _resource_version(obj: dict[str, Any]) -> int:
    meta = obj.get("metadata")
    rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
    return int(rv) if isinstance(rv, str) and rv.isdigit() and len(rv) < 40 else -1


def _tie_key(raw: RawObject) -> tuple[int, str]:
    # Newest first (the loaders keep the first of duplicates), then the full content, so two different
    # objects with one name come out the same way from any input order.
    return -_resource_version(raw.obj), json.dumps(raw.obj, sort_keys=True, default=str)


def canonical_order(raws: list[RawObject], *, namespaced: bool) -> list[RawObject]:
    """`raws` sorted by informer key; objects sharing a key (duplicates, unnamed manifests) by
    (newest resourceVersion, canonical JSON). Already-sorted input costs one linear pass."""
    # A compact record (load/compact.py) knows its key without building its metadata.
    keys = [meta_key(r.meta, namespaced) if (k := r.compact_key) is None else k for r in raws]
    order = sorted(range(len(raws)), key=keys.__getitem__)
    out = list(map(raws.__getitem__, order))
    if len(set(keys)) == len(keys):
        return out  # no two objects share a key (the usual dump): no ties to order (one C-level check)
    skeys = list(map(keys.__getitem__, order))
    i = 0
    n = len(out)
    while i < n:
        j = i + 1
        while j < n and skeys[j] == skeys[i]:
            j += 1
        if j - i > 1:
            out[i:j] = sorted(out[i:j], key=_tie_key)
        i = j
    return out
