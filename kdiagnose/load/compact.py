"""Bound pods of a streamed JSON List as compact records: a row of modelled per-pod values, a shared spec.

A 150,000-pod dump holds far fewer distinct pod specs than pods: the replicas of a workload differ only in
their name, uid, nodeName and status. The streaming decoder (stream_json.py) reads a bound pod's spec
fields as msgspec.Raw (byte spans, no Python objects) and its volumes and volume mounts as byte spans too,
so the ones no plugin reads can be dropped; the spec with nodeName taken out is re-encoded into one byte
string, the `Template` key. Each template is validated, admitted and modelled once (template_pod).

The pod's metadata and status are decoded into typed structs (FastItem) whose field types are at least as
strict as model/validation.py's checks of a pod's metadata and status, so a pod that decodes is valid, and
`fast_row` turns it into a `Row`: exactly the per-pod values model.objects.Pod would compute
(`row_from_pod` of `pod_from_parts`; tests/test_compact_pods.py compares both on varied clusters). That is
done where the item is decoded (in the decoding worker when there is one, load/parallel.py), so the process
that builds the snapshot only fills a Pod's slots (model.objects.pod_from_row). Pods whose status has
in-place-resize resources take the general way (dicts, validate_pod_parts, pod_from_parts) to their row;
pods that fail a check, or whose spec is not shared (template_pod None), are decoded the per-object way.

`BoundPod.to_obj()` rebuilds exactly the dict the per-object path decodes: it decodes the item again from
its batch's bytes (the file, re-read and checked unchanged, or the in-memory input), so anything that needs
the object itself (two objects with one name, keep_raw, a caller reading RawObject.obj) gets the same
object as before, without every record keeping its metadata and status as dicts.
"""

from __future__ import annotations

import os
from sys import intern
from typing import Any

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType
from msgspec.structs import asdict

from kdiagnose.load.trim import POD_CONDITIONS, volume_is_relevant
from kdiagnose.model.objects import ModelError, Pod, Row, pod_from_parts, pod_from_row, row_from_pod

__all__ = [
    "BatchSource",
    "BoundPod",
    "FastItem",
    "Template",
    "TemplateTable",
    "bound_pod_or_none",
    "fast_bound_pod",
    "filtered_conditions",
    "filtered_mounts",
    "slim_pod",
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
    # NodeDeclaredFeatures reads both (load/trim.py keeps them too): restartPolicyRules' RestartAllContainers
    # action and volumeMounts' bindMountOptions (filtered_mounts keeps only the mounts that have them).
    restartPolicyRules: Any = UNSET
    volumeMounts: Any = UNSET


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
    hostUsers: Any = UNSET
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
    restartPolicyRules: Raw | UnsetType = UNSET
    volumeMounts: Raw | UnsetType = UNSET


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
    hostUsers: Raw | UnsetType = UNSET
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


# The fast form: metadata and status typed as strictly as model/validation.py checks them
# (validate_pod_parts: name and namespace strings, labels a string map, ownerReferences objects with string
# fields and a boolean controller, status strings, conditions and claim statuses lists of objects, container
# status names strings), so an item that decodes needs no further check; anything else fails the batch's
# decode and the batch takes the RawItem form. Unknown fields are skipped in C.
class FastOwner(Struct):
    apiVersion: str | UnsetType | None = UNSET
    kind: str | UnsetType | None = UNSET
    name: str | UnsetType | None = UNSET
    uid: str | UnsetType | None = UNSET
    controller: bool | UnsetType | None = UNSET


class FastMeta(Struct):
    name: str | UnsetType | None = UNSET
    namespace: str | UnsetType | None = UNSET
    uid: str | UnsetType | None = UNSET
    labels: Raw | UnsetType = UNSET  # a few distinct sets among many pods: decoded once each (_labels)
    ownerReferences: list[FastOwner] | UnsetType | None = UNSET
    creationTimestamp: str | UnsetType | None = UNSET
    deletionTimestamp: str | UnsetType | None = UNSET


class FastState(Struct):
    waiting: Any = UNSET


class FastContainerStatus(Struct):
    name: str | UnsetType | None = UNSET
    resources: Any = UNSET
    allocatedResources: Any = UNSET
    state: FastState | UnsetType | None = UNSET


class FastStatus(Struct):
    phase: str | UnsetType | None = UNSET
    startTime: str | UnsetType | None = UNSET
    nominatedNodeName: str | UnsetType | None = UNSET
    conditions: list[dict[str, Any]] | UnsetType | None = UNSET
    resourceClaimStatuses: list[dict[str, Any]] | UnsetType | None = UNSET
    resize: str | UnsetType | None = UNSET
    containerStatuses: list[FastContainerStatus] | UnsetType | None = UNSET
    initContainerStatuses: list[FastContainerStatus] | UnsetType | None = UNSET


class FastItem(Struct):
    apiVersion: Any = UNSET
    kind: Any = UNSET
    metadata: FastMeta | UnsetType = UNSET
    spec: RawSpec | UnsetType = UNSET
    status: FastStatus | UnsetType = UNSET


_ENCODER = msgspec.json.Encoder()
_ITEM = msgspec.json.Decoder(Item)
_SPEC = msgspec.json.Decoder(Spec)
_ANY = msgspec.json.Decoder()
_LABELS = msgspec.json.Decoder(dict[str, str] | None)
_OWNER_FIELDS = ("apiVersion", "kind", "name", "controller")  # model.objects._OWNER_FIELDS


class Template:
    """One distinct bound-pod spec (nodeName aside): its key is the spec re-encoded as JSON; `model` its
    spec part as a Pod (template_pod), built once per process."""

    __slots__ = ("admitted", "key", "model")

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.model: Pod | bool | None = False  # False: not built yet
        self.admitted: bool | None = None  # spec.priority set (template_pod's first condition); None: unread

    def priority_set(self) -> bool:
        """What template_pod requires first (admitted: spec.priority an integer), read without modelling."""
        if self.admitted is None:
            prio = self.spec().get("priority")
            self.admitted = isinstance(prio, int) and not isinstance(prio, bool)
        return self.admitted

    def spec(self) -> Obj:
        """The spec as the per-object path decodes it (without nodeName): a fresh dict each call."""
        out: Obj = msgspec.to_builtins(_SPEC.decode(self.key))
        return out


class TemplateTable:
    """Templates by key, so the pods of one spec share one Template; and the decoder's per-process caches
    of values many pods share (volumes and mounts kept, label sets, owner references)."""

    __slots__ = ("by_key", "defer", "labels", "mounts", "owners", "volumes")

    def __init__(self, defer: bool = False) -> None:
        # defer: a decoding worker's table. Its specs are validated and modelled by the process that builds
        # the snapshot (which models each once anyway; load/snapshot.py expands the pods of a spec that
        # fails), not once more in every worker: the worker only checks that the spec was admitted.
        self.defer = defer
        self.by_key: dict[bytes, Template] = {}
        self.volumes: dict[bytes, Raw | UnsetType | None] = {}
        self.mounts: dict[bytes, Raw | UnsetType | None] = {}
        self.labels: dict[bytes, dict[str, str]] = {}
        self.owners: dict[tuple[Any, ...], list[Obj]] = {}

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


class BatchSource:
    """Where a decoded batch of items came from, to decode one of them again (BoundPod.to_obj): a file's
    byte range (re-read, and refused if the file changed since) or an in-memory input's; neither for a live
    List's pages (load/live_pods.py). `typed`: the
    (kind, apiVersion) of a typed List's items, which carry neither."""

    __slots__ = ("data", "hi", "lo", "path", "stamp", "typed")

    # The items of the batch decoded last: expanding many records of one batch (keep_raw, a test) decodes it
    # once, and at most one batch's bytes are held at a time.
    _last: tuple[BatchSource, list[Raw]] | None = None

    def __init__(
        self,
        path: str | None,
        data: bytes | None,
        lo: int,
        hi: int,
        typed: tuple[str, str] | None,
        stamp: tuple[int, int] | None = None,
    ) -> None:
        self.path = path
        self.data = data
        self.lo = lo
        self.hi = hi
        self.typed = typed
        self.stamp = stamp if stamp is not None or path is None else file_stamp(path)

    def item(self, index: int) -> Raw:
        last = BatchSource._last
        if last is None or last[0] is not self:
            last = BatchSource._last = (self, self.items(self.body()))
        return last[1][index]

    def body(self) -> bytes:
        """The batch's bytes, as the decoder read them."""
        if self.data is not None:
            return self.data[self.lo : self.hi]
        if self.path is None:
            # A live list's records keep no bytes (load/live_pods.py), and nothing reads them back.
            from kdiagnose.errors import InputError

            raise InputError("a pod of the live list cannot be decoded again (its bytes are not kept)")
        with open(self.path, "rb") as f:
            if file_stamp(self.path) != self.stamp:
                from kdiagnose.errors import InputError

                raise InputError(f"{self.path}: the file changed while kdiagnose was reading it")
            f.seek(self.lo)
            return f.read(self.hi - self.lo)

    def items(self, body: bytes) -> list[Raw]:
        """The batch's items as JSON texts (a JSON batch: its items between `[` and `]`)."""
        return msgspec.json.decode(b"[" + body + b"]", type=list[Raw])


def file_stamp(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


class BoundPod:
    """A bound pod decoded the compact way: its per-pod values (`row`, model.objects.Row), its spec's
    Template, and where to decode it again (`source`, `index`: the item's place in its batch)."""

    __slots__ = ("index", "key", "pre", "row", "source", "template")

    def __init__(self, row: Row, template: Template, source: BatchSource, index: int) -> None:
        self.row = row
        # The informer key (load/order.py meta_key; the name is never empty on a compact record), read by
        # canonical_order and build_snapshot's duplicate check: made once, here (in the parallel load,
        # while the workers decode the later ranges), not once by each.
        self.key = f"{row[0]}/{row[1]}"
        self.template = template
        self.source = source
        self.index = index
        # pod_from_row(template_pod(template), row), built ahead while the decoding workers run
        # (load/parallel.py); build_snapshot takes it when its release template has the same spec slots.
        self.pre: Pod | None = None

    @property
    def meta(self) -> Obj:
        """What the loaders' checks and the informer order read of the metadata (RawObject.meta)."""
        return {"name": self.row[1], "namespace": self.row[0]}

    def pod(self) -> Pod | None:
        """A new Pod (requests not yet computed); None: take the per-object path."""
        tpl = template_pod(self.template)
        return None if tpl is None else pod_from_row(tpl, self.row)

    def to_obj(self) -> Obj:
        """The object the per-object path builds for this item (slim_pod of the Item)."""
        full = _ITEM.decode(self.source.item(self.index))
        if self.source.typed is not None and full.kind is UNSET:
            full.kind, full.apiVersion = self.source.typed
        return slim_pod(full)


def filtered_conditions(status: Obj) -> None:
    """Only the conditions a check reads (load/trim.py POD_CONDITIONS), in place."""
    if isinstance(status.get("conditions"), list):
        status["conditions"] = [
            c for c in status["conditions"] if isinstance(c, dict) and c.get("type") in POD_CONDITIONS
        ]


def filtered_mounts(mounts: Any) -> list[Obj] | None:
    """A container's volumeMounts as load/trim.py keeps them: only those with bindMountOptions (what
    NodeDeclaredFeatures reads), each with its name; None when none is kept or it is not a list."""
    if not isinstance(mounts, list):
        return None
    kept = [
        {k: m[k] for k in ("name", "bindMountOptions") if k in m}
        for m in mounts
        if isinstance(m, dict) and m.get("bindMountOptions")
    ]
    return kept or None


def slim_pod(item: Item) -> Obj:
    """The per-object form of a bound pod item (what the streaming loader keeps of it)."""
    obj: Obj = msgspec.to_builtins(item)
    spec: Obj = obj["spec"]  # the caller checked it is there
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            if "volumeMounts" in c:
                mounts = filtered_mounts(c["volumeMounts"])
                if mounts is None:
                    del c["volumeMounts"]
                else:
                    c["volumeMounts"] = mounts
    vols = spec.get("volumes")
    if isinstance(vols, list):
        kept = [v for v in vols if volume_is_relevant(v)]
        if kept:
            spec["volumes"] = kept
        else:
            del spec["volumes"]
    status = obj.get("status")
    if isinstance(status, dict):
        filtered_conditions(status)
    return obj


def _kept_volumes(raw: Raw, table: TemplateTable) -> Raw | UnsetType | None:
    """The spec's volumes without those no plugin reads (a shared cache: replicas mount the same volumes);
    None when they are not a list of mappings (the per-object path keeps them as they are)."""
    key = bytes(raw)
    if key in table.volumes:
        return table.volumes[key]
    got: Raw | UnsetType | None
    decoded = _ANY.decode(raw)
    if not isinstance(decoded, list) or not all(isinstance(v, dict) for v in decoded):
        got = None
    else:
        kept = [v for v in decoded if volume_is_relevant(v)]
        got = Raw(_ENCODER.encode(kept)) if kept else UNSET
    table.volumes[key] = got
    return got


def _kept_mounts(raw: Raw, table: TemplateTable) -> Raw | UnsetType:
    key = bytes(raw)
    got = table.mounts.get(key)
    if got is None:
        kept = filtered_mounts(_ANY.decode(raw))
        got = table.mounts[key] = Raw(_ENCODER.encode(kept)) if kept else UNSET
    return got


def _template(spec: RawSpec, table: TemplateTable) -> Template | None:
    """The pod's Template (spec.nodeName taken out, volumes and mounts filtered), or None for an unusual
    shape (volumes not a list of mappings: the per-object path)."""
    if spec.volumes is not UNSET:
        volumes = _kept_volumes(spec.volumes, table)
        if volumes is None:
            return None
        spec.volumes = volumes
    for containers in (spec.containers, spec.initContainers):
        if containers is not UNSET:
            for c in containers:
                if c.volumeMounts is not UNSET:
                    c.volumeMounts = _kept_mounts(c.volumeMounts, table)
    spec.nodeName = UNSET
    return table.get(_ENCODER.encode(spec))


def _bound_spec(item: RawItem | FastItem) -> tuple[RawSpec, str] | None:
    spec = item.spec
    if item.kind != "Pod" or not isinstance(spec, RawSpec):
        return None
    node_name = spec.nodeName
    if not isinstance(node_name, str) or not node_name or type(item.apiVersion) is not str:
        return None
    return spec, node_name


def bound_pod_or_none(
    item: RawItem, table: TemplateTable, source: BatchSource, index: int
) -> BoundPod | None:
    """The compact record of a bound pod item (the general way: metadata and status as dicts, checked and
    modelled with the per-object code), or None when it is anything else, has an unusual shape or fails a
    check (the caller then decodes it the per-object way, which reports the error)."""
    from kdiagnose.model.validation import validate_pod_parts

    bound = _bound_spec(item)
    meta, status = item.metadata, item.status
    if bound is None or not isinstance(meta, Meta) or not isinstance(status, Status):
        return None
    spec, node_name = bound
    tpl = _template(spec, table)
    if tpl is None:
        return None
    model = template_pod(tpl)
    meta_obj = _fields(meta)
    name = meta_obj.get("name")
    if model is None or not isinstance(name, str) or not name:
        return None
    status_obj = _fields(status)
    for cs_key in ("containerStatuses", "initContainerStatuses"):
        statuses = status_obj.get(cs_key)
        if statuses is not None:
            status_obj[cs_key] = [_fields(cs) for cs in statuses]
    filtered_conditions(status_obj)
    try:
        validate_pod_parts(meta_obj, status_obj, "")
        pod = pod_from_parts(model, meta_obj, node_name, status_obj)
    except ModelError:
        return None
    return BoundPod(row_from_pod(pod), tpl, source, index)


_NO_STATUS = (None, UNSET)


def fast_bound_pod(item: FastItem, table: TemplateTable, source: BatchSource, index: int) -> BoundPod | bool:
    """The compact record of a bound pod decoded as a FastItem; False: not a bound pod of the usual shape
    (decode it the per-object way); True: a bound pod whose status needs the general way
    (bound_pod_or_none). The row is what row_from_pod(pod_from_parts(...)) gives, computed from the typed
    fields without building the metadata and status dicts."""
    bound = _bound_spec(item)
    meta, status = item.metadata, item.status
    if bound is None or not isinstance(meta, FastMeta) or not isinstance(status, FastStatus):
        return False
    name = meta.name
    if not name:
        return False  # files.py reports a pod without a name, from the per-object form
    waiting: list[tuple[str, str, str]] = []
    for prefix, statuses in (("init ", status.initContainerStatuses), ("", status.containerStatuses)):
        if statuses:
            for cs in statuses:
                if cs.resources not in _NO_STATUS or cs.allocatedResources not in _NO_STATUS:
                    return True  # in-place resize: quantities to check and parse
                state = cs.state
                w = state.waiting if isinstance(state, FastState) else None
                if isinstance(w, dict) and w:
                    waiting.append(
                        (
                            prefix + str(cs.name or ""),
                            str(w.get("reason") or "Waiting"),
                            str(w.get("message") or "").strip(),
                        )
                    )
    labels: dict[str, str] = {}
    if meta.labels is not UNSET:
        key = bytes(meta.labels)
        cached = table.labels.get(key)
        if cached is not None:
            labels = cached
        else:
            try:
                got = _LABELS.decode(meta.labels)
            except msgspec.ValidationError:
                return True  # scalars that are not strings: the general way reads them as their text
            labels = table.labels[key] = {intern(k): intern(v) for k, v in got.items()} if got else {}
    spec, node_name = bound
    tpl = _template(spec, table)
    if tpl is None or not (tpl.priority_set() if table.defer else template_pod(tpl) is not None):
        return False
    owners: list[Obj] = []
    refs = meta.ownerReferences
    if refs:
        okey = tuple(
            (r.apiVersion, r.kind, r.name, r.controller) for r in refs
        )  # UNSET (absent) and None (null) both kept apart: the model keeps a present null
        owners_got = table.owners.get(okey)
        if owners_got is None:
            owners_got = table.owners[okey] = [
                {k: v for k, v in zip(_OWNER_FIELDS, o, strict=True) if v is not UNSET} for o in okey
            ]
        owners = owners_got
    conds = status.conditions
    rcs = status.resourceClaimStatuses
    row: Row = (
        intern(meta.namespace or "default"),
        name,
        meta.uid or "",
        labels,
        owners,
        intern(meta.creationTimestamp or ""),
        meta.deletionTimestamp or None,
        intern(node_name),
        intern(status.phase or ""),
        intern(status.startTime or ""),
        status.nominatedNodeName or "",
        [c for c in conds if c.get("type") in POD_CONDITIONS] if conds else [],
        status.resize or "",
        (list(rcs) if rcs else [], {}, tuple(waiting)) if rcs or waiting else None,
    )
    return BoundPod(row, tpl, source, index)


def _fields(struct: Struct) -> Obj:
    """msgspec.to_builtins of a struct whose fields are plain values (UNSET ones left out), without
    copying the values: twice as fast on the 150,000 pods of a big dump."""
    return {k: v for k, v in asdict(struct).items() if v is not UNSET}


def source_path(f: Any) -> str | None:
    """The file a stream reads (for BatchSource), None for an in-memory one."""
    name = getattr(f, "name", None)
    return os.path.abspath(name) if isinstance(name, str) else None
