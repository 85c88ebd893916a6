"""Snapshot and NodeInfo: the scheduler cache's view of the cluster (pkg/scheduler/framework/types.go)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from kdiagnose.model.objects import Node, Pod
from kdiagnose.versions import Dialect

__all__ = ["NodeInfo", "Snapshot", "has_pod_affinity", "has_required_anti_affinity"]

Obj = dict[str, Any]


def has_pod_affinity(pod: Pod) -> bool:
    a = pod.affinity
    return bool(a.get("podAffinity") or a.get("podAntiAffinity"))


def has_required_anti_affinity(pod: Pod) -> bool:
    anti = pod.affinity.get("podAntiAffinity")
    return isinstance(anti, dict) and bool(anti.get("requiredDuringSchedulingIgnoredDuringExecution"))


def _pvc_keys(pod: Pod) -> list[str]:
    keys = []
    for v in pod.volumes:
        claim = v.get("persistentVolumeClaim")
        if isinstance(claim, dict) and claim.get("claimName"):
            keys.append(f"{pod.namespace}/{claim['claimName']}")
        elif isinstance(v.get("ephemeral"), dict):
            keys.append(f"{pod.namespace}/{pod.name}-{v.get('name')}")
    return keys


class NodeInfo:
    """A node plus the aggregate of the pods bound to it; mutable only through add_pod/remove_pod on clones."""

    __slots__ = (
        "node",
        "non_zero_cpu",
        "non_zero_mem",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node) -> None:
        self.node = node
        self.pods: list[Pod] = []
        self.requested: dict[str, int] = {}
        self.non_zero_cpu = 0
        self.non_zero_mem = 0
        self.used_ports: list[tuple[str, str, int]] = []
        self.pods_with_affinity: list[Pod] = []
        self.pods_with_required_anti_affinity: list[Pod] = []
        self.pvc_ref_counts: dict[str, int] = {}

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def allocatable(self) -> dict[str, int]:
        return self.node.allocatable

    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)
        req = self.requested
        for k, v in pod.requests.items():
            req[k] = req.get(k, 0) + v
        self.non_zero_cpu += pod.non_zero_cpu
        self.non_zero_mem += pod.non_zero_mem
        ports = pod.host_ports()
        if ports:
            self.used_ports.extend(ports)
        if pod.affinity and has_pod_affinity(pod):
            self.pods_with_affinity.append(pod)
            if has_required_anti_affinity(pod):
                self.pods_with_required_anti_affinity.append(pod)
        if pod.volumes:
            for key in _pvc_keys(pod):
                self.pvc_ref_counts[key] = self.pvc_ref_counts.get(key, 0) + 1

    def remove_pod(self, pod: Pod) -> None:
        for i, p in enumerate(self.pods):
            if p is pod:
                del self.pods[i]
                break
        else:
            return
        req = self.requested
        for k, v in pod.requests.items():
            req[k] = req.get(k, 0) - v
        self.non_zero_cpu -= pod.non_zero_cpu
        self.non_zero_mem -= pod.non_zero_mem
        for port in pod.host_ports():
            if port in self.used_ports:
                self.used_ports.remove(port)
        self.pods_with_affinity = [p for p in self.pods_with_affinity if p is not pod]
        self.pods_with_required_anti_affinity = [p for p in self.pods_with_required_anti_affinity if p is not pod]
        for key in _pvc_keys(pod):
            n = self.pvc_ref_counts.get(key, 0) - 1
            if n > 0:
                self.pvc_ref_counts[key] = n
            else:
                self.pvc_ref_counts.pop(key, None)

    def clone(self) -> NodeInfo:
        c = NodeInfo(self.node)
        c.pods = list(self.pods)
        c.requested = dict(self.requested)
        c.non_zero_cpu = self.non_zero_cpu
        c.non_zero_mem = self.non_zero_mem
        c.used_ports = list(self.used_ports)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


class Snapshot:
    """One immutable view of the cluster for a replay; plugins read it, never write it.

    `objects` holds the raw API objects of every other kind by kind name; `present` records which kinds the
    input contained at all (an empty list counts), so a plugin can say "not checked: missing X".
    `cache` is for per-snapshot derived data plugins share across pods (indexes); it never changes a verdict.
    """

    def __init__(
        self,
        dialect: Dialect,
        nodes: Iterable[Node],
        pods: Iterable[Pod],
        objects: dict[str, list[Obj]] | None = None,
        present: Iterable[str] = (),
        skipped: Counter[str] | None = None,
        warnings: Iterable[str] = (),
    ) -> None:
        self.dialect = dialect
        self.node_infos: list[NodeInfo] = [NodeInfo(n) for n in nodes]
        self.node_info_by_name: dict[str, NodeInfo] = {ni.name: ni for ni in self.node_infos}
        self.pods: list[Pod] = []  # every pod the scheduler's informer keeps (not Succeeded/Failed)
        self.pending: list[Pod] = []
        for pod in pods:
            if pod.phase in ("Succeeded", "Failed"):
                continue
            self.pods.append(pod)
            if not pod.node_name:
                self.pending.append(pod)
                continue
            ni = self.node_info_by_name.get(pod.node_name)
            if ni is not None:
                ni.add_pod(pod)
        self.objects: dict[str, list[Obj]] = objects or {}
        self.present: set[str] = set(present) | {"Node", "Pod"}
        self.skipped: Counter[str] = skipped or Counter()
        self.warnings: list[str] = list(warnings)
        self.cache: dict[str, Any] = {}

    @property
    def num_nodes(self) -> int:
        return len(self.node_infos)

    def bound_pods(self) -> Iterable[Pod]:
        for ni in self.node_infos:
            yield from ni.pods

    def kind(self, kind: str) -> list[Obj]:
        return self.objects.get(kind, [])

    def has(self, kind: str) -> bool:
        return kind in self.present

    def index(self, kind: str) -> dict[str, Obj]:
        """Objects of a kind by `namespace/name` (or `name` for cluster-scoped kinds), built once."""
        key = f"index:{kind}"
        idx = self.cache.get(key)
        if idx is None:
            idx = {}
            for o in self.kind(kind):
                meta = o.get("metadata") or {}
                ns = meta.get("namespace")
                idx[f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))] = o
            self.cache[key] = idx
        return idx  # type: ignore[no-any-return]

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self.index(kind).get(f"{namespace}/{name}" if namespace else name)

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        ns = self.get("Namespace", namespace)
        if ns is None:
            # The API server sets this label on every namespace; a dump without Namespaces still has it.
            return {"kubernetes.io/metadata.name": namespace}
        labels = dict((ns.get("metadata") or {}).get("labels") or {})
        labels.setdefault("kubernetes.io/metadata.name", namespace)
        return labels
