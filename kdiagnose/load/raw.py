"""The loaders' shared types: RawObject (an object and where it came from), LoadResult, the kinds the
replay reads. Every reader (files, fast, stream_json, stream_yaml) and snapshot.py import from here, so the
readers form no import cycle: raw <- parse <- stream_* <- fast <- files <- dump.load_snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["KNOWN_KINDS", "LoadResult", "Obj", "RawObject", "record_list", "where"]

Obj = dict[str, Any]

# Kinds the replay (or its reports) reads; everything else is skipped and counted.
KNOWN_KINDS = {
    "Node",
    "Pod",
    "Namespace",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
    "PriorityClass",
    "PodDisruptionBudget",
    "Event",
    "ReplicaSet",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CronJob",
    "ReplicationController",
    "Service",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "DeviceClass",
    "DeviceTaintRule",
    "LimitRange",
    "RuntimeClass",
    "ConfigMap",
    "NodePool",  # karpenter.sh/v1 (kdiagnose.autoscaler)
    "NodeClaim",
}


def where(source: str, doc_index: int | None = None, line: int = 0) -> str:
    """`file`, `file (document 3)`, `file (document 3, line 41)`: the prefix of every input error."""
    parts = []
    if doc_index is not None:
        parts.append(f"document {doc_index + 1}")
    if line > 0:
        parts.append(f"line {line}")
    return f"{source} ({', '.join(parts)})" if parts else source


@dataclass(slots=True)
class RawObject:
    """An API object and where it came from (file, 0-based document index, 1-based line or 0)."""

    obj: Obj
    source: str
    doc_index: int = 0
    line: int = 0

    @property
    def where(self) -> str:
        return where(self.source, self.doc_index, self.line)


@dataclass(slots=True)
class LoadResult:
    objects: list[RawObject] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    list_kinds: set[str] = field(default_factory=set)  # kinds of typed Lists seen, even when empty
    # `kubectl cluster-info dump --output-directory` trees found in the input: root -> namespace folders.
    cluster_info_dumps: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # e.g. a file that looks cut off


def record_list(result: LoadResult, source: str, objects: list[RawObject], shell: dict[str, Any]) -> bool:
    """Add a streamed List's objects to `result` (False when `shell` is no List with items, result untouched)."""
    kind = shell.get("kind")
    if not isinstance(kind, str) or not kind.endswith("List") or not objects:
        return False
    if kind != "List":
        result.list_kinds.add(kind[: -len("List")])
    result.files.append(source)
    result.objects.extend(objects)
    return True
