"""Bound pods of a streamed JSON List as compact records: per-pod metadata and status, plus a shared spec.

A 150,000-pod dump holds a few hundred distinct pod specs: the replicas of a workload differ only in their
name, uid, nodeName and status. The streaming decoder (stream_json.py) reads a bound pod's spec fields as
msgspec.Raw (byte spans, no Python objects) and its volumes as `{source: Raw}` so the ones no plugin reads
can be dropped; the spec with nodeName taken out is then re-encoded into one byte string, the `Template`
key. load/snapshot.py validates, admits and models each template once (model.objects.pod_from_parts) and
each pod's metadata and status with the same code as any other pod.

`BoundPod.to_obj()` rebuilds exactly the dict the per-object path decodes (the same structs, the same
msgspec conversion), so anything that needs the object itself (an invalid pod's error message, two
objects with one name, keep_raw, a caller reading RawObject.obj) gets the same object as before.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType
from msgspec.structs import asdict

from kdiagnose.load.trim import POD_CONDITIONS, volume_is_relevant

__all__ = ["BoundPod", "Template", "TemplateTable", "bound_pod_or_none", "filtered_conditions"]

Obj = dict[str, Any]


# The fields of a bound Pod that kdiagnose.model.objects.Pod reads (a bound pod's annotations are unused).
class Meta(Struct, omit_defaults=True):
    name: Any = UNSET
    namespace: Any = UNSET
    uid: Any = UNSET
    labels: Any = UNSET
    ownerReferences: Any = UNSET
    creationTimestamp: Any = UNSET
    deletionTimestamp: Any = UNSET
    generateName: Any = UNSET


class Container(Struct, omit_defaults=True):
    name: Any = UNSET
    image: Any = UNSET
    resources: Any = UNSET
    ports: Any = UNSET
    restartPolicy: Any = UNSET


class Spec(Struct, omit_defaults=True):
    nodeName: Any = UNSET
    schedulerName: Any = UNSET
    priority: Any = UNSET
    priorityClassName: Any = UNSET
    preemptionPolicy: Any = UNSET
    runtimeClassName: Any = UNSET
    nodeSelector: Any = UNSET
    affinity: Any = UNSET
    tolerations: Any = UNSET
    topologySpreadConstraints: Any = UNSET
    hostNetwork: Any = UNSET
    overhead: Any = UNSET
    resources: Any = UNSET
    schedulingGates: Any = UNSET
    resourceClaims: Any = UNSET
    containers: list[Container] | UnsetType = UNSET
    initContainers: list[Container] | UnsetType = UNSET
    volumes: Any = UNSET


class ContainerStatus(Struct, omit_defaults=True):
    name: Any = UNSET
    resources: Any = UNSET
    allocatedResources: Any = UNSET
    state: Any = UNSET  # a bound pod's waiting reason (ImagePullBackOff, ...) for --pod on it


class Status(Struct, omit_defaults=True):
    phase: Any = UNSET
    startTime: Any = UNSET
    nominatedNodeName: Any = UNSET
    conditions: Any = UNSET
    resourceClaimStatuses: Any = UNSET
    resize: Any = UNSET
    containerStatuses: list[ContainerStatus] | UnsetType = UNSET
    initContainerStatuses: list[ContainerStatus] | UnsetType = UNSET


class Item(Struct, omit_defaults=True):
    apiVersion: Any = UNSET
    kind: Any = UNSET
    metadata: Meta | UnsetType = UNSET
    spec: Spec | UnsetType = UNSET
    status: Status | UnsetType = UNSET


# The same fields with the spec's values left as byte spans: what the streaming decoder reads first.
class RawContainer(Struct, omit_defaults=True):
    name: Raw | UnsetType = UNSET
    image: Raw | UnsetType = UNSET
    resources: Raw | UnsetType = UNSET
    ports: Raw | UnsetType = UNSET
    restartPolicy: Raw | UnsetType = UNSET


class RawSpec(Struct, omit_defaults=True):
    nodeName: Any = UNSET
    schedulerName: Raw | UnsetType = UNSET
    priority: Raw | UnsetType = UNSET
    priorityClassName: Raw | UnsetType = UNSET
    preemptionPolicy: Raw | UnsetType = UNSET
    runtimeClassName: Raw | UnsetType = UNSET
    nodeSelector: Raw | UnsetType = UNSET
    affinity: Raw | UnsetType = UNSET
    tolerations: Raw | UnsetType = UNSET
    topologySpreadConstraints: Raw | UnsetType = UNSET
    hostNetwork: Raw | UnsetType = UNSET
    overhead: Raw | UnsetType = UNSET
    resources: Raw | UnsetType = UNSET
    schedulingGates: Raw | UnsetType = UNSET
    resourceClaims: Raw | UnsetType = UNSET
    containers: list[RawContainer] | UnsetType = UNSET
    initContainers: list[RawContainer] | UnsetType = UNSET
    volumes: Raw | UnsetType = UNSET


class RawItem(Struct, omit_defaults=True):
    apiVersion: Any = UNSET
    kind: Any = UNSET
    metadata: Meta | UnsetType = UNSET
    spec: RawSpec | UnsetType = UNSET
    status: Status | UnsetType = UNSET


_ENCODER = msgspec.json.Encoder()
_SPEC = msgspec.json.Decoder(Spec)
_VOLUMES = msgspec.json.Decoder(list[dict[str, Raw]])


class Template:
    """One distinct bound-pod spec (nodeName aside): its key is the spec re-encoded as JSON."""

    __slots__ = ("key",)

    def __init__(self, key: bytes) -> None:
        self.key = key

    def spec(self) -> Obj:
        """The spec as the per-object path decodes it (without nodeName): a fresh dict each call."""
        out: Obj = msgspec.to_builtins(_SPEC.decode(self.key))
        return out


class TemplateTable:
    """Templates by key, so the pods of one spec share one Template (and one modelled spec)."""

    __slots__ = ("by_key",)

    def __init__(self) -> None:
        self.by_key: dict[bytes, Template] = {}

    def get(self, key: bytes) -> Template:
        t = self.by_key.get(key)
        if t is None:
            t = self.by_key[key] = Template(key)
        return t


class BoundPod:
    """A bound pod: apiVersion, metadata and status as the per-object path has them, the spec's Template
    and nodeName."""

    __slots__ = ("api_version", "meta", "node_name", "status", "template")

    def __init__(self, api_version: str, meta: Obj, node_name: str, status: Obj, template: Template) -> None:
        self.api_version = api_version
        self.meta = meta
        self.node_name = node_name
        self.status = status
        self.template = template

    def to_obj(self) -> Obj:
        """The object the per-object path builds for this item (stream_json._slim_pod of the Item)."""
        spec = {"nodeName": self.node_name, **self.template.spec()}
        return {
            "apiVersion": self.api_version,
            "kind": "Pod",
            "metadata": self.meta,
            "spec": spec,
            "status": self.status,
        }


def filtered_conditions(status: Obj) -> None:
    """Only the conditions a check reads (load/trim.py POD_CONDITIONS), in place."""
    if isinstance(status.get("conditions"), list):
        status["conditions"] = [
            c for c in status["conditions"] if isinstance(c, dict) and c.get("type") in POD_CONDITIONS
        ]


def bound_pod_or_none(item: RawItem, table: TemplateTable) -> BoundPod | None:
    """The compact record of a bound pod item, or None when it is anything else or has an unusual shape
    (the caller then decodes it the per-object way)."""
    spec = item.spec
    if item.kind != "Pod" or not isinstance(spec, RawSpec):
        return None
    node_name = spec.nodeName
    if not isinstance(node_name, str) or not node_name:
        return None
    meta, status = item.metadata, item.status
    if type(item.apiVersion) is not str or not isinstance(meta, Meta) or not isinstance(status, Status):
        return None
    volumes = spec.volumes
    if volumes is not UNSET:
        try:
            decoded = _VOLUMES.decode(volumes)
        except msgspec.ValidationError:
            return None  # not a list of mappings: the per-object path keeps it as it is
        kept = [v for v in decoded if volume_is_relevant(v)]
        spec.volumes = Raw(_ENCODER.encode(kept)) if kept else UNSET
    spec.nodeName = UNSET
    key = _ENCODER.encode(spec)
    status_obj = _fields(status)
    for cs_key in ("containerStatuses", "initContainerStatuses"):
        statuses = status_obj.get(cs_key)
        if statuses is not None:
            status_obj[cs_key] = [_fields(cs) for cs in statuses]
    filtered_conditions(status_obj)
    return BoundPod(item.apiVersion, _fields(meta), node_name, status_obj, table.get(key))


def _fields(struct: Struct) -> Obj:
    """msgspec.to_builtins of a struct whose fields are plain values (UNSET ones left out), without
    copying the values: twice as fast on the 150,000 pods of a big dump."""
    return {k: v for k, v in asdict(struct).items() if v is not UNSET}
