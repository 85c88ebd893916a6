"""Bound pods of a streamed JSON List as compact records: per-pod metadata and status, plus a shared spec.

A 150,000-pod dump holds a few hundred distinct pod specs: the replicas of a workload differ only in their
name, uid, nodeName and status. The streaming decoder (stream_json.py) reads a bound pod's spec fields as
msgspec.Raw (byte spans, no Python objects) and its volumes as `{source: Raw}` so the ones no plugin reads
can be dropped; the spec with nodeName taken out is then re-encoded into one byte string, the `Template`
key. Each template is validated, admitted and modelled once (template_pod) and each pod's metadata and status
checked per pod (BoundPod.check, in the decoding worker when there is one) with the same code as the
per-object path; build_snapshot models the pod (BoundPod.pod, model.objects.pod_from_parts) and applies
the release (what it drops, the requests).

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
from kdiagnose.model.objects import ModelError, Pod, pod_from_parts

__all__ = [
    "BoundPod",
    "Template",
    "TemplateTable",
    "bound_pod_or_none",
    "filtered_conditions",
    "template_pod",
]

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
    """One distinct bound-pod spec (nodeName aside): its key is the spec re-encoded as JSON; `model` its
    spec part as a Pod (template_pod), built once per process."""

    __slots__ = ("key", "model")

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.model: Pod | bool | None = False  # False: not built yet

    def spec(self) -> Obj:
        """The spec as the per-object path decodes it (without nodeName): a fresh dict each call."""
        out: Obj = msgspec.to_builtins(_SPEC.decode(self.key))
        return out


class TemplateTable:
    """Templates by key, so the pods of one spec share one Template."""

    __slots__ = ("by_key",)

    def __init__(self) -> None:
        self.by_key: dict[bytes, Template] = {}

    def get(self, key: bytes) -> Template:
        t = self.by_key.get(key)
        if t is None:
            t = self.by_key[key] = Template(key)
        return t


def template_pod(tpl: Template) -> Pod | None:
    """The spec part shared by every pod of `tpl`: validated, admitted and modelled as the per-object path
    does it (load/snapshot.py), for a release with DRA and pod-level resources on (build_snapshot takes
    away what other releases drop). None: the pods of this spec take the per-object path."""
    if tpl.model is not False:
        return tpl.model if isinstance(tpl.model, Pod) else None
    from kdiagnose.load.admission import AdmissionContext, admit_pod
    from kdiagnose.model.validation import validate_pod_spec

    spec = tpl.spec()
    pod: Pod | None = None
    prio = spec.get("priority")
    try:
        validate_pod_spec(spec, "")
        # Admitted (spec.priority set): admission only applies the decode-time defaults, which read the
        # spec alone; the namespace and the cluster's LimitRanges/PriorityClasses play no part.
        if isinstance(prio, int) and not isinstance(prio, bool):
            rejected: list[str] = []
            admit_pod({"metadata": {}, "spec": spec}, AdmissionContext([], [], [], []), rejected)
            if not rejected:
                pod = Pod.__new__(Pod)
                pod.namespace, pod.name = "", ""
                pod._set_spec(spec)
    except ModelError:
        pod = None
    tpl.model = pod
    return pod


class BoundPod:
    """A bound pod: apiVersion, metadata and status as the per-object path has them, the spec's Template
    and nodeName. `checked`: the pod passes validation and its spec can be shared (set by the decoder, in
    the decoding worker when there is one), so build_snapshot models it with pod()."""

    __slots__ = ("api_version", "checked", "meta", "node_name", "status", "template")

    def __init__(
        self,
        api_version: str,
        meta: Obj,
        node_name: str,
        status: Obj,
        template: Template,
        checked: bool = False,
    ) -> None:
        self.api_version = api_version
        self.meta = meta
        self.node_name = node_name
        self.status = status
        self.template = template
        self.checked = checked

    def __reduce__(self) -> tuple[Any, ...]:
        # Sent from the decoding workers (load/parallel.py): a tuple, not a dict of slots.
        return BoundPod, (
            self.api_version,
            self.meta,
            self.node_name,
            self.status,
            self.template,
            self.checked,
        )

    def check(self) -> None:
        from kdiagnose.model.validation import validate_pod_parts

        if template_pod(self.template) is None:
            return
        try:
            validate_pod_parts(self.meta, self.status, "")
            self.checked = True
        except ModelError:
            pass

    def pod(self) -> Pod | None:
        """The Pod (requests not yet computed) for a checked record; None: take the per-object path."""
        tpl = template_pod(self.template) if self.checked else None
        if tpl is None:
            return None
        try:
            return pod_from_parts(tpl, self.meta, self.node_name, self.status)
        except ModelError:
            return None

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
    rec = BoundPod(item.apiVersion, _fields(meta), node_name, status_obj, table.get(key))
    rec.check()
    return rec


def _fields(struct: Struct) -> Obj:
    """msgspec.to_builtins of a struct whose fields are plain values (UNSET ones left out), without
    copying the values: twice as fast on the 150,000 pods of a big dump."""
    return {k: v for k, v in asdict(struct).items() if v is not UNSET}
