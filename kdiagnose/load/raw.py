"""The loaders' shared types: RawObject (an object and where it came from), LoadResult, the kinds the
replay reads. Every reader (files, fast, stream_json, stream_yaml) and snapshot.py import from here, so the
readers form no import cycle: raw <- parse <- stream_* <- fast <- files <- dump.load_snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "ARCHIVE_EXTS",
    "KNOWN_KINDS",
    "TAR_EXTS",
    "ZIP_EXTS",
    "Compact",
    "LoadResult",
    "Obj",
    "RawObject",
    "record_list",
    "where",
]

Obj = dict[str, Any]

# Archives the loaders open (files.py) and the CI gate names members of (`ARCHIVE:MEMBER`, gate/locate.py).
TAR_EXTS = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")
ZIP_EXTS = (".zip",)
ARCHIVE_EXTS = TAR_EXTS + ZIP_EXTS

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


class Compact(Protocol):
    """An object kept in a compact form by a streaming loader (load/compact.py BoundPod)."""

    @property
    def meta(self) -> Obj: ...

    @property
    def key(self) -> str:
        """The informer key, "namespace/name" (load/order.py meta_key of `meta`)."""
        ...

    def to_obj(self) -> Obj: ...


class RawObject:
    """An API object and where it came from (file, 0-based document index, 1-based line or 0).

    A streamed bound pod is held as `compact` (load/compact.py) and its dict built only when `obj` is read;
    load/snapshot.py and the readers' checks use `kind` and `meta`, which do not build it."""

    __slots__ = ("_obj", "compact", "doc_index", "line", "node", "source", "valid")

    def __init__(
        self,
        obj: Obj | None,
        source: str,
        doc_index: int = 0,
        line: int = 0,
        compact: Compact | None = None,
        valid: bool = False,
    ) -> None:
        self._obj = obj
        self.source = source
        self.doc_index = doc_index
        self.line = line
        self.compact = compact
        # model.validation.validate(obj) passed already (in a decoding worker, load/parallel.py), so
        # build_snapshot need not check it again; any new object clears it.
        self.valid = valid
        # A Node's model (model.objects.Node without keep_raw) made ahead of build_snapshot, which takes it
        # once instead of modelling the object (load/parallel.py makes it while the workers decode); any
        # new object clears it.
        self.node: Any = None

    @property
    def obj(self) -> Obj:
        if self._obj is None:
            assert self.compact is not None
            self._obj = self.compact.to_obj()
        return self._obj

    @obj.setter
    def obj(self, value: Obj) -> None:
        self._obj = value
        self.valid = False
        self.node = None

    def expand(self) -> Obj:
        """Build the object of a compact record and drop the record: from here on it is any object."""
        obj = self.obj
        self.compact = None
        return obj

    @property
    def compact_key(self) -> str | None:
        """A compact record's informer key (namespaced), None for any other object."""
        return self.compact.key if self._obj is None and self.compact is not None else None

    @property
    def kind(self) -> Any:
        return "Pod" if self._obj is None else self._obj.get("kind")

    @property
    def meta(self) -> Any:
        return (
            self.compact.meta if self._obj is None and self.compact is not None else self.obj.get("metadata")
        )

    @property
    def where(self) -> str:
        return where(self.source, self.doc_index, self.line)

    def __repr__(self) -> str:
        return f"RawObject({self.where}, {self.kind})"


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
