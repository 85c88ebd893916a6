"""Builders for the node-basics ports (TaintToleration, NodeAffinity, NodePorts, NodeResources*,
ImageLocality): st.MakePod()/st.MakeNode() methods from pkg/scheduler/testing/wrappers.go that
tests/upstream/builders.py does not have, plus the file-local helpers of the upstream tests
(makeNode, newResourcePod, nodeWithTaints, ...).

Unlike builders.PodWrapper, BasicPod starts with NO containers, as upstream's MakePod() does: a default
container without requests would count 100m/200Mi for scoring and change every resource score.
"""

from __future__ import annotations

import copy
from typing import Any

from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.requests import finish_pod
from kdiagnose.versions import Dialect
from tests.upstream.builders import V134, NodeWrapper, PodWrapper

__all__ = [
    "V134",
    "BasicNode",
    "BasicPod",
    "make_node",
    "make_pod",
    "node_with_taints",
    "pod_with_tolerations",
    "resource_node",
    "resource_pod",
]

Obj = dict[str, Any]


def _quantities(res: dict[str, Any]) -> dict[str, str]:
    return {k: str(v) for k, v in res.items()}


class BasicPod(PodWrapper):
    """st.MakePod() with an empty container list."""

    def __init__(self) -> None:
        super().__init__()
        self._spec["containers"] = []

    def name(self, name: str) -> BasicPod:
        super().name(name)
        return self

    def node(self, node: str) -> BasicPod:
        super().node(node)
        return self

    def req(self, requests: dict[str, Any]) -> BasicPod:
        """Req(): appends a container requesting `requests` (as upstream, one container per call)."""
        n = len(self._spec["containers"])
        self._spec["containers"].append(
            {"name": f"con{n}", "image": "pause", "resources": {"requests": _quantities(requests)}}
        )
        return self

    def init_req(self, requests: dict[str, Any], restart_policy: str = "") -> BasicPod:
        n = len(self._spec.setdefault("initContainers", []))
        c: Obj = {"name": f"init-con{n}", "image": "pause", "resources": {"requests": _quantities(requests)}}
        if restart_policy:
            c["restartPolicy"] = restart_policy
        self._spec["initContainers"].append(c)
        return self

    def container(self, image: str) -> BasicPod:
        n = len(self._spec["containers"])
        self._spec["containers"].append({"name": f"con{n}", "image": image})
        return self

    def init_container(self, image: str) -> BasicPod:
        n = len(self._spec.setdefault("initContainers", []))
        self._spec["initContainers"].append({"name": f"init-con{n}", "image": image})
        return self

    def host_port(self, port: int, host_ip: str = "", protocol: str = "") -> BasicPod:
        """ContainerPort with a hostPort, on a container of its own (newPod in node_ports_test.go)."""
        p: Obj = {"containerPort": port, "hostPort": port}
        if host_ip:
            p["hostIP"] = host_ip
        if protocol:
            p["protocol"] = protocol
        n = len(self._spec["containers"])
        self._spec["containers"].append({"name": f"con{n}", "image": "pause", "ports": [p]})
        return self

    def overhead(self, overhead: dict[str, Any]) -> BasicPod:
        self._spec["overhead"] = _quantities(overhead)
        return self

    def spec(self, **fields: Any) -> BasicPod:
        self._spec.update(copy.deepcopy(fields))
        return self

    # ------------------------------------------------- NodePorts, NodeInfo, PodRequests ports
    def uid(self, uid: str) -> BasicPod:
        super().uid(uid)
        return self

    def namespace(self, ns: str) -> BasicPod:
        super().namespace(ns)
        return self

    def container_port(self, ports: list[Obj]) -> BasicPod:
        """ContainerPort(): a container of its own declaring `ports` (ContainerPort dicts)."""
        n = len(self._spec["containers"])
        self._spec["containers"].append({"name": f"con{n}", "image": "pause", "ports": copy.deepcopy(ports)})
        return self

    def init_container_port(self, sidecar: bool, ports: list[Obj]) -> BasicPod:
        """InitContainerPort(sidecar, ports): an init container (restartPolicy Always if sidecar)."""
        n = len(self._spec.setdefault("initContainers", []))
        c: Obj = {"name": f"init-con{n}", "image": "pause", "ports": copy.deepcopy(ports)}
        if sidecar:
            c["restartPolicy"] = "Always"
        self._spec["initContainers"].append(c)
        return self

    def named_container(
        self,
        name: str,
        requests: dict[str, Any] | None = None,
        init: bool = False,
        restart_policy: str = "",
    ) -> BasicPod:
        """A container (or init container) named `name` with optional requests, for status lookups."""
        c: Obj = {"name": name, "image": "pause", "resources": {}}
        if requests is not None:
            c["resources"]["requests"] = _quantities(requests)
        if restart_policy:
            c["restartPolicy"] = restart_policy
        self._spec.setdefault("initContainers" if init else "containers", []).append(c)
        return self

    def container_status(
        self,
        name: str,
        requests: dict[str, Any] | None = None,
        allocated: dict[str, Any] | None = None,
        init: bool = False,
    ) -> BasicPod:
        """A ContainerStatus: `requests` becomes status resources.requests (the `resources` field is set
        only when given, as a nil *ResourceRequirements upstream); `allocated` allocatedResources."""
        cs: Obj = {"name": name}
        if requests is not None:
            cs["resources"] = {"requests": _quantities(requests)}
        if allocated is not None:
            cs["allocatedResources"] = _quantities(allocated)
        self._status.setdefault("initContainerStatuses" if init else "containerStatuses", []).append(cs)
        return self

    def resize_condition(self, ctype: str, reason: str = "", status: str = "True") -> BasicPod:
        c: Obj = {"type": ctype, "status": status}
        if reason:
            c["reason"] = reason
        self._status.setdefault("conditions", []).append(c)
        return self

    def pod_level_requests(self, requests: dict[str, Any]) -> BasicPod:
        self._spec.setdefault("resources", {})["requests"] = _quantities(requests)
        return self

    def pvc_volume(self, claim: str) -> BasicPod:
        vols = self._spec.setdefault("volumes", [])
        vols.append({"name": f"vol{len(vols)}", "persistentVolumeClaim": {"claimName": claim}})
        return self

    def host_network(self) -> BasicPod:
        self._spec["hostNetwork"] = True
        return self

    def scheduling_gates(self, gates: list[str]) -> BasicPod:
        """SchedulingGates()."""
        self._spec["schedulingGates"] = [{"name": g} for g in gates]
        return self

    def obj(self, dialect: Dialect = V134) -> Pod:
        p = Pod(self.raw())
        finish_pod(p, dialect)
        return p


def make_pod() -> BasicPod:
    return BasicPod()


class BasicNode(NodeWrapper):
    """st.MakeNode(); capacity() sets allocatable (upstream sets capacity and allocatable alike)."""

    def __init__(self) -> None:
        super().__init__()
        self._status = {"allocatable": {}}

    def name(self, name: str) -> BasicNode:
        super().name(name)
        return self

    def taints(self, taints: list[Obj]) -> BasicNode:
        super().taints(taints)
        return self

    def capacity(self, res: dict[str, Any]) -> BasicNode:
        self._status["allocatable"] = _quantities(res)
        return self

    def labels(self, labels: dict[str, str]) -> BasicNode:
        self._meta.setdefault("labels", {}).update(labels)
        return self

    def images(self, images: list[tuple[list[str], int]]) -> BasicNode:
        self._status["images"] = [{"names": list(n), "sizeBytes": size} for n, size in images]
        return self

    def unschedulable(self, value: bool = True) -> BasicNode:
        self._spec["unschedulable"] = value
        return self


def make_node() -> BasicNode:
    return BasicNode()


def node_with_taints(name: str, taints: list[Obj]) -> Node:
    """nodeWithTaints (tainttoleration/taint_toleration_test.go)."""
    return make_node().name(name).taints(taints).obj()


def pod_with_tolerations(name: str, tolerations: list[Obj], dialect: Dialect = V134) -> Pod:
    """podWithTolerations (tainttoleration/taint_toleration_test.go)."""
    return make_pod().name(name).spec(tolerations=tolerations).obj(dialect)


def resource_node(name: str, milli_cpu: int, memory: int, scalars: dict[str, int] | None = None) -> Node:
    """makeNode (noderesources/test_util.go): cpu in millicores, memory in bytes, pods 100."""
    res: dict[str, Any] = {"cpu": f"{milli_cpu}m", "memory": memory, "pods": 100}
    res.update(scalars or {})
    return make_node().name(name).capacity(res).obj()


def resource_pod(
    containers: list[dict[str, Any]],
    init: list[dict[str, Any]] | None = None,
    node: str = "",
    name: str = "p",
    dialect: Dialect = V134,
    overhead: dict[str, Any] | None = None,
) -> Pod:
    """newResourcePod / newResourceInitPod / newResourceOverheadPod (noderesources/fit_test.go)."""
    w = make_pod().name(name)
    for r in containers:
        w.req(r)
    for r in init or ():
        w.init_req(r)
    if overhead:
        w.overhead(overhead)
    if node:
        w.node(node)
    return w.obj(dialect)
