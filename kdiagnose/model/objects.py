"""Typed, lightweight Pod and Node: only what kube-scheduler reads, extracted once from the API objects.

Other kinds (PVCs, PVs, StorageClasses, PDBs, DRA objects, ...) stay as the raw dicts the API returns:
the plugins that read them are few and read little, so a model would cost more than it saves.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from sys import intern
from typing import Any

from kdiagnose.model.quantity import QuantityError, resource_value

__all__ = [
    "NO_POD_RESOURCES",
    "SPEC_SLOTS",
    "Container",
    "ModelError",
    "Node",
    "Pod",
    "Row",
    "Taint",
    "Toleration",
    "parse_resource_list",
    "pod_from_parts",
    "pod_from_row",
    "row_from_pod",
]

Obj = dict[str, Any]


class ModelError(ValueError):
    """An object the API server would have rejected (bad quantity, wrong type), with the field path."""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not value:
        return {}
    # Interned: label keys and values repeat across thousands of pods and nodes.
    return {intern(str(k)): intern("" if v is None else str(v)) for k, v in value.items()}


def _istr(value: Any) -> str:
    return intern(str(value or ""))


@lru_cache(maxsize=4096)
def _str_resource_value(name: str, q: str) -> int:
    # 150,000 pods spell a few dozen distinct quantities ("100m", "128Mi"); exact Fraction parsing is slow.
    return resource_value(name, q)


def parse_resource_list(raw: Any, where: str) -> dict[str, int]:
    """A ResourceList as scheduler integers (cpu in millicores); `where` names the field for errors."""
    out: dict[str, int] = {}
    if not isinstance(raw, dict):
        return out
    for name, q in raw.items():
        try:
            out[str(name)] = (
                _str_resource_value(str(name), q) if type(q) is str else resource_value(str(name), q)
            )
        except QuantityError as e:
            raise ModelError(f"{where}.{name}: {e}") from None
    return out


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """ToleratesTaint from k8s.io/api/core/v1/toleration.go."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("Equal", ""):
            return self.value == taint.value
        return False  # Gt/Lt are alpha and off


@lru_cache(maxsize=1024)
def _toleration(key: str, operator: str, value: str, effect: str, seconds: int | None) -> Toleration:
    # Flyweight: 150,000 pods carry a handful of distinct tolerations (DefaultTolerationSeconds, DaemonSets).
    return Toleration(key, operator, value, effect, seconds)


def _tolerations(raw: Any) -> list[Toleration]:
    out = []
    for t in _list(raw):
        if not isinstance(t, dict):
            continue
        secs = t.get("tolerationSeconds")
        out.append(
            _toleration(
                str(t.get("key") or ""),
                str(t.get("operator") or "Equal"),
                str(t.get("value") or ""),
                str(t.get("effect") or ""),
                secs if isinstance(secs, int) and not isinstance(secs, bool) else None,
            )
        )
    return out


# Pod conditions some check reads (triage, in-place resize, preemption's terminating victims).
_POD_CONDITIONS = {"PodScheduled", "PodResizePending", "PodResizeInProgress", "DisruptionTarget"}
_OWNER_FIELDS = ("apiVersion", "kind", "name", "controller")
# Shared by every pod without pod-level resources (most of them); never mutated.
NO_POD_RESOURCES: dict[str, dict[str, int]] = {"requests": {}, "limits": {}}


@dataclass(slots=True)
class Container:
    """One container's scheduling-relevant fields; requests/limits keep the raw quantities' integers."""

    name: str
    image: str
    requests: dict[str, int]
    limits: dict[str, int]
    ports: list[tuple[str, str, int, int]]  # (hostIP, protocol, hostPort, containerPort)
    restart_policy: str  # "Always" marks a sidecar init container
    # What NodeDeclaredFeatures infers features from (component-helpers nodedeclaredfeatures/features):
    # a restartPolicyRules action RestartAllContainers, a volumeMount with bindMountOptions.
    restart_all_containers: bool = False
    bind_mount_options: bool = False


def _container(raw: Any, where: str) -> Container:
    c = _dict(raw)
    res = _dict(c.get("resources"))
    ports = []
    for p in _list(c.get("ports")):
        p = _dict(p)
        try:
            host_port = int(p.get("hostPort") or 0)
            container_port = int(p.get("containerPort") or 0)
        except (TypeError, ValueError):
            raise ModelError(f"{where}.ports: invalid port {p!r}") from None
        ports.append((str(p.get("hostIP") or ""), str(p.get("protocol") or "TCP"), host_port, container_port))
    return Container(
        name=_istr(c.get("name")),
        image=_istr(c.get("image")),
        requests=parse_resource_list(res.get("requests"), f"{where}.resources.requests"),
        limits=parse_resource_list(res.get("limits"), f"{where}.resources.limits"),
        ports=ports,
        restart_policy=str(c.get("restartPolicy") or ""),
        restart_all_containers=any(
            _dict(r).get("action") == "RestartAllContainers" for r in _list(c.get("restartPolicyRules"))
        ),
        bind_mount_options=any(bool(_dict(m).get("bindMountOptions")) for m in _list(c.get("volumeMounts"))),
    )


class Pod:
    """A Pod as the scheduler sees it. `requests` etc. are filled by model.requests at snapshot build."""

    __slots__ = (
        "affinity",
        "annotations",
        "conditions",
        "container_statuses",
        "container_waiting",
        "containers",
        "creation_timestamp",
        "deletion_timestamp",
        "host_network",
        "host_users",
        "init_containers",
        "labels",
        "name",
        "namespace",
        "node_name",
        "node_selector",
        "nominated_node_name",
        "non_zero_cpu",
        "non_zero_mem",
        "overhead",
        "owner_refs",
        "phase",
        "pod_resources",
        "preemption_policy",
        "priority",
        "priority_class_name",
        "raw",
        "requests",
        "resize_status",
        "resource_claim_statuses",
        "resource_claims",
        "runtime_class_name",
        "scheduler_name",
        "scheduling_gates",
        "start_time",
        "tolerations",
        "topology_spread_constraints",
        "uid",
        "volumes",
    )

    def __init__(self, obj: Obj, keep_raw: bool = False) -> None:
        meta = _dict(obj.get("metadata"))
        spec = _dict(obj.get("spec"))
        self._set_meta(meta, spec)
        self._set_spec(spec)
        self._set_status(_dict(obj.get("status")))
        self.raw: Obj | None = obj if keep_raw else None

    # The three parts are separate so that load/fastpod.py can build the spec part once per distinct spec
    # (the replicas of one workload) and the metadata and status parts per pod, with the same code.
    def _set_meta(self, meta: Obj, spec: Obj) -> None:
        self.namespace: str = intern(str(meta.get("namespace") or "default"))
        self.name: str = str(meta.get("name") or "")
        self.uid: str = str(meta.get("uid") or "")
        self.labels: dict[str, str] = _str_map(meta.get("labels"))
        self.owner_refs: list[dict[str, Any]] = [
            {k: r[k] for k in _OWNER_FIELDS if k in r} for r in map(_dict, _list(meta.get("ownerReferences")))
        ]
        self.creation_timestamp: str = _istr(meta.get("creationTimestamp"))
        self.deletion_timestamp: str | None = meta.get("deletionTimestamp") or None
        self.node_name: str = _istr(spec.get("nodeName"))
        # Only pending pods' annotations are ever shown; bound pods are many and nobody reads theirs.
        self.annotations: dict[str, str] = {} if self.node_name else _str_map(meta.get("annotations"))

    def _where(self) -> str:
        return f"Pod {self.namespace}/{self.name}"

    def _set_spec(self, spec: Obj) -> None:
        """Every field taken from the spec except nodeName (SPEC_SLOTS); needs namespace and name set."""
        where = self._where()
        self.scheduler_name: str = intern(str(spec.get("schedulerName") or "default-scheduler"))
        prio = spec.get("priority")
        self.priority: int = int(prio) if isinstance(prio, int | float) and not isinstance(prio, bool) else 0
        self.priority_class_name: str = str(spec.get("priorityClassName") or "")
        self.preemption_policy: str = str(spec.get("preemptionPolicy") or "PreemptLowerPriority")
        self.runtime_class_name: str = str(spec.get("runtimeClassName") or "")
        self.node_selector: dict[str, str] = _str_map(spec.get("nodeSelector"))
        self.affinity: dict[str, Any] = _dict(spec.get("affinity"))
        self.tolerations: list[Toleration] = _tolerations(spec.get("tolerations"))
        self.topology_spread_constraints: list[dict[str, Any]] = [
            _dict(c) for c in _list(spec.get("topologySpreadConstraints"))
        ]
        self.volumes: list[dict[str, Any]] = [_dict(v) for v in _list(spec.get("volumes"))]
        self.host_network: bool = bool(spec.get("hostNetwork"))
        host_users = spec.get("hostUsers")
        self.host_users: bool | None = host_users if isinstance(host_users, bool) else None
        self.containers: list[Container] = [
            _container(c, f"{where} spec.containers[{i}]")
            for i, c in enumerate(_list(spec.get("containers")))
        ]
        self.init_containers: list[Container] = [
            _container(c, f"{where} spec.initContainers[{i}]")
            for i, c in enumerate(_list(spec.get("initContainers")))
        ]
        self.overhead: dict[str, int] = parse_resource_list(spec.get("overhead"), f"{where} spec.overhead")
        pod_res = _dict(spec.get("resources"))
        self.pod_resources: dict[str, dict[str, int]] = (
            {
                "requests": parse_resource_list(pod_res.get("requests"), f"{where} spec.resources.requests"),
                "limits": parse_resource_list(pod_res.get("limits"), f"{where} spec.resources.limits"),
            }
            if pod_res
            else NO_POD_RESOURCES
        )
        self.scheduling_gates: list[str] = [
            str(_dict(g).get("name") or "") for g in _list(spec.get("schedulingGates"))
        ]
        self.resource_claims: list[dict[str, Any]] = [_dict(c) for c in _list(spec.get("resourceClaims"))]

    def _set_status(self, status: Obj) -> None:
        where = self._where()
        self.phase: str = _istr(status.get("phase"))
        self.start_time: str = _istr(status.get("startTime"))
        self.nominated_node_name: str = str(status.get("nominatedNodeName") or "")
        self.conditions: list[dict[str, Any]] = [
            c for c in map(_dict, _list(status.get("conditions"))) if c.get("type") in _POD_CONDITIONS
        ]
        self.resource_claim_statuses: list[dict[str, Any]] = [
            _dict(c) for c in _list(status.get("resourceClaimStatuses"))
        ]
        self.resize_status: str = str(status.get("resize") or "")
        # Actuated (status.*ContainerStatuses[].resources) and allocated requests, for in-place resize.
        # component-helpers/resource AggregateContainerRequests: a status counts only when it has
        # `resources` (allocatedResources alone is ignored); sidecars' come from initContainerStatuses.
        self.container_statuses: dict[str, tuple[dict[str, int], dict[str, int]]] = {}
        # (container, waiting reason, message) of containers not running, init containers first: what a
        # bound pod is stuck on (ImagePullBackOff, CrashLoopBackOff, ...), as `kubectl describe` shows.
        self.container_waiting: tuple[tuple[str, str, str], ...] = tuple(
            (
                ("init " if key == "initContainerStatuses" else "") + str(cs.get("name") or ""),
                str(_dict(_dict(cs.get("state")).get("waiting")).get("reason") or "Waiting"),
                str(_dict(_dict(cs.get("state")).get("waiting")).get("message") or "").strip(),
            )
            for key in ("initContainerStatuses", "containerStatuses")
            for cs in map(_dict, _list(status.get(key)))
            if _dict(_dict(cs.get("state")).get("waiting"))
        )
        for key in ("containerStatuses", "initContainerStatuses"):
            for i, cs in enumerate(map(_dict, _list(status.get(key)))):
                res = cs.get("resources")
                if not isinstance(res, dict):
                    continue
                self.container_statuses[str(cs.get("name") or "")] = (
                    parse_resource_list(res.get("requests"), f"{where} status.{key}[{i}].resources.requests"),
                    parse_resource_list(
                        cs.get("allocatedResources"), f"{where} status.{key}[{i}].allocatedResources"
                    ),
                )
        # Filled by kdiagnose.model.requests.finish_pod once the dialect is known.
        self.requests: dict[str, int] = {}
        self.non_zero_cpu: int = 0
        self.non_zero_mem: int = 0

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def terminating(self) -> bool:
        return self.deletion_timestamp is not None

    def controller_ref(self) -> dict[str, Any] | None:
        for ref in self.owner_refs:
            if ref.get("controller"):
                return ref
        return None

    def host_ports(self, include_sidecars: bool = True) -> list[tuple[str, str, int]]:
        """(hostIP, protocol, hostPort) wanted by the pod; hostNetwork makes containerPort the hostPort."""
        out = []
        containers = list(self.containers)
        if include_sidecars:
            containers += [c for c in self.init_containers if c.restart_policy == "Always"]
        for c in containers:
            for ip, proto, hp, cp in c.ports:
                port = hp if hp > 0 else (cp if self.host_network else 0)
                if port > 0:
                    out.append((ip or "0.0.0.0", proto or "TCP", port))
        return out

    def images(self) -> list[str]:
        return [c.image for c in self.init_containers] + [c.image for c in self.containers]

    def __repr__(self) -> str:
        return f"Pod({self.key})"


# What Pod._set_spec fills: equal for every pod with the same spec (nodeName aside), so load/fastpod.py
# shares them between the replicas of a workload (nothing mutates a pod's fields in place: what-ifs copy).
SPEC_SLOTS = (
    "scheduler_name",
    "priority",
    "priority_class_name",
    "preemption_policy",
    "runtime_class_name",
    "node_selector",
    "affinity",
    "tolerations",
    "topology_spread_constraints",
    "volumes",
    "host_network",
    "host_users",
    "containers",
    "init_containers",
    "overhead",
    "pod_resources",
    "scheduling_gates",
    "resource_claims",
)


def pod_from_parts(template: Pod, meta: Obj, node_name: Any, status: Obj) -> Pod:
    """The Pod that `Pod(obj)` builds when obj's spec equals `template`'s (except nodeName): metadata and
    status read here, the spec fields (SPEC_SLOTS) shared with the template."""
    pod = Pod.__new__(Pod)
    pod._set_meta(meta, {"nodeName": node_name})
    # One statement per slot: 150,000 pods, and a setattr loop costs three times as much.
    pod.scheduler_name = template.scheduler_name
    pod.priority = template.priority
    pod.priority_class_name = template.priority_class_name
    pod.preemption_policy = template.preemption_policy
    pod.runtime_class_name = template.runtime_class_name
    pod.node_selector = template.node_selector
    pod.affinity = template.affinity
    pod.tolerations = template.tolerations
    pod.topology_spread_constraints = template.topology_spread_constraints
    pod.volumes = template.volumes
    pod.host_network = template.host_network
    pod.host_users = template.host_users
    pod.containers = template.containers
    pod.init_containers = template.init_containers
    pod.overhead = template.overhead
    pod.pod_resources = template.pod_resources
    pod.scheduling_gates = template.scheduling_gates
    pod.resource_claims = template.resource_claims
    pod._set_status(status)
    pod.raw = None
    return pod


# A bound pod's per-pod values, in this order: namespace, name, uid, labels, owner_refs,
# creation_timestamp, deletion_timestamp, node_name, phase, start_time, nominated_node_name, conditions,
# resize_status, and None or (resource_claim_statuses, container_statuses, container_waiting) (most bound
# pods have none of those). What load/compact.py computes where a dump is decoded (in the decoding worker
# when there is one), so that the process building the snapshot only fills slots (pod_from_row). Values
# may be shared between pods (a label set, owner references): nothing mutates a pod's fields in place.
Row = tuple[
    str,
    str,
    str,
    dict[str, str],
    list[dict[str, Any]],
    str,
    str | None,
    str,
    str,
    str,
    str,
    list[dict[str, Any]],
    str,
    Any,
]


def row_from_pod(pod: Pod) -> Row:
    """The Row of a bound Pod built by pod_from_parts: pod_from_row(template, row_from_pod(p)) equals p."""
    extra = (
        (pod.resource_claim_statuses, pod.container_statuses, pod.container_waiting)
        if pod.resource_claim_statuses or pod.container_statuses or pod.container_waiting
        else None
    )
    return (
        pod.namespace,
        pod.name,
        pod.uid,
        pod.labels,
        pod.owner_refs,
        pod.creation_timestamp,
        pod.deletion_timestamp,
        pod.node_name,
        pod.phase,
        pod.start_time,
        pod.nominated_node_name,
        pod.conditions,
        pod.resize_status,
        extra,
    )


def pod_from_row(template: Pod, row: Row) -> Pod:
    """The Pod that pod_from_parts(template, meta, node_name, status) builds, from its Row."""
    pod = Pod.__new__(Pod)
    (
        pod.namespace,
        pod.name,
        pod.uid,
        pod.labels,
        pod.owner_refs,
        pod.creation_timestamp,
        pod.deletion_timestamp,
        pod.node_name,
        pod.phase,
        pod.start_time,
        pod.nominated_node_name,
        pod.conditions,
        pod.resize_status,
        extra,
    ) = row
    pod.annotations = {}  # a bound pod's are never read (Pod._set_meta)
    pod.scheduler_name = template.scheduler_name
    pod.priority = template.priority
    pod.priority_class_name = template.priority_class_name
    pod.preemption_policy = template.preemption_policy
    pod.runtime_class_name = template.runtime_class_name
    pod.node_selector = template.node_selector
    pod.affinity = template.affinity
    pod.tolerations = template.tolerations
    pod.topology_spread_constraints = template.topology_spread_constraints
    pod.volumes = template.volumes
    pod.host_network = template.host_network
    pod.host_users = template.host_users
    pod.containers = template.containers
    pod.init_containers = template.init_containers
    pod.overhead = template.overhead
    pod.pod_resources = template.pod_resources
    pod.scheduling_gates = template.scheduling_gates
    pod.resource_claims = template.resource_claims
    if extra is None:
        pod.resource_claim_statuses = []
        pod.container_statuses = {}
        pod.container_waiting = ()
    else:
        pod.resource_claim_statuses, pod.container_statuses, pod.container_waiting = extra
    pod.requests = {}
    pod.non_zero_cpu = 0
    pod.non_zero_mem = 0
    pod.raw = None
    return pod


class Node:
    """A Node as the scheduler sees it."""

    __slots__ = (
        "allocatable",
        "annotations",
        "conditions",
        "declared_features",
        "images",
        "kubelet_version",
        "labels",
        "name",
        "provider_id",
        "raw",
        "taints",
        "unschedulable",
    )

    def __init__(self, obj: Obj, keep_raw: bool = False) -> None:
        meta = _dict(obj.get("metadata"))
        spec = _dict(obj.get("spec"))
        status = _dict(obj.get("status"))
        self.name: str = str(meta.get("name") or "")
        self.labels: dict[str, str] = _str_map(meta.get("labels"))
        self.annotations: dict[str, str] = _str_map(meta.get("annotations"))
        self.unschedulable: bool = bool(spec.get("unschedulable"))
        # Names the cloud instance (and on Azure its scale set): node-group membership for the autoscaler.
        self.provider_id: str = str(spec.get("providerID") or "")
        self.taints: list[Taint] = [
            Taint(str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or ""))
            for t in map(_dict, _list(spec.get("taints")))
        ]
        self.allocatable: dict[str, int] = parse_resource_list(
            status.get("allocatable"), f"Node {self.name} status.allocatable"
        )
        self.images: list[tuple[list[str], int]] = []
        for img in map(_dict, _list(status.get("images"))):
            size = img.get("sizeBytes")
            self.images.append(
                ([str(n) for n in _list(img.get("names"))], int(size) if isinstance(size, int) else 0)
            )
        self.conditions: list[dict[str, Any]] = [_dict(c) for c in _list(status.get("conditions"))]
        # status.declaredFeatures (NodeDeclaredFeatures, v1.36+): what the kubelet says it supports.
        self.declared_features: frozenset[str] = frozenset(
            str(f) for f in _list(status.get("declaredFeatures")) if isinstance(f, str)
        )
        # status.nodeInfo.kubeletVersion: what a node-side remedy (a kubelet feature gate) has to start from.
        info = _dict(status.get("nodeInfo"))
        self.kubelet_version: str = str(info.get("kubeletVersion") or "")
        self.raw: Obj | None = obj if keep_raw else None

    def __repr__(self) -> str:
        return f"Node({self.name})"
