"""Fluent builders mirroring kube-scheduler's pkg/scheduler/testing/wrappers.go (st.MakePod(), st.MakeNode(),
st.MakeLabelSelector()), so upstream table tests translate line by line into dicts and then typed Pods/Nodes.

Only the wrapper methods the ported tests use exist. Upstream's MakePod() has an empty namespace; here it is
"default" (every pod of a case shares it, so the semantics are the same).
"""

from __future__ import annotations

import copy
from typing import Any

from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.requests import finish_pod
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.scheduler.framework import Handle, Plugin
from kdiagnose.versions import Dialect, dialect_for

__all__ = [
    "V134",
    "LabelSelectorWrapper",
    "NodeWrapper",
    "PodWrapper",
    "make_label_selector",
    "make_node",
    "make_pod",
    "new_plugin",
    "new_snapshot",
]

V134 = dialect_for("v1.34.1")
Obj = dict[str, Any]


class LabelSelectorWrapper:
    """st.MakeLabelSelector(): matchLabels via label(), matchExpressions via exists()/in_()/not_in()."""

    def __init__(self) -> None:
        self._sel: Obj = {}

    def label(self, key: str, value: str) -> LabelSelectorWrapper:
        self._sel.setdefault("matchLabels", {})[key] = value
        return self

    def _expr(self, key: str, op: str, values: list[str] | None = None) -> LabelSelectorWrapper:
        e: Obj = {"key": key, "operator": op}
        if values is not None:
            e["values"] = list(values)
        self._sel.setdefault("matchExpressions", []).append(e)
        return self

    def exists(self, key: str) -> LabelSelectorWrapper:
        return self._expr(key, "Exists")

    def not_exist(self, key: str) -> LabelSelectorWrapper:
        return self._expr(key, "DoesNotExist")

    def in_(self, key: str, values: list[str]) -> LabelSelectorWrapper:
        return self._expr(key, "In", values)

    def not_in(self, key: str, values: list[str]) -> LabelSelectorWrapper:
        return self._expr(key, "NotIn", values)

    def obj(self) -> Obj:
        return copy.deepcopy(self._sel)


def make_label_selector() -> LabelSelectorWrapper:
    return LabelSelectorWrapper()


class PodWrapper:
    """st.MakePod()."""

    def __init__(self) -> None:
        self._meta: Obj = {"name": "", "namespace": "default", "uid": ""}
        self._spec: Obj = {"containers": [{"name": "c", "image": "img"}]}
        self._status: Obj = {}

    # ---------------------------------------------------------------- metadata
    def name(self, name: str) -> PodWrapper:
        self._meta["name"] = name
        if not self._meta["uid"]:
            self._meta["uid"] = name
        return self

    def uid(self, uid: str) -> PodWrapper:
        self._meta["uid"] = uid
        return self

    def namespace(self, ns: str) -> PodWrapper:
        self._meta["namespace"] = ns
        return self

    def label(self, key: str, value: str) -> PodWrapper:
        self._meta.setdefault("labels", {})[key] = value
        return self

    def labels(self, labels: dict[str, str]) -> PodWrapper:
        self._meta.setdefault("labels", {}).update(labels)
        return self

    def terminating(self) -> PodWrapper:
        self._meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        return self

    def owner_reference(self, name: str, kind: str, api_version: str) -> PodWrapper:
        self._meta.setdefault("ownerReferences", []).append(
            {"apiVersion": api_version, "kind": kind, "name": name, "uid": name, "controller": True}
        )
        return self

    # ---------------------------------------------------------------- spec
    def node(self, node: str) -> PodWrapper:
        self._spec["nodeName"] = node
        self._status["phase"] = "Running"
        return self

    def priority(self, p: int) -> PodWrapper:
        self._spec["priority"] = p
        return self

    def node_selector(self, sel: dict[str, str]) -> PodWrapper:
        self._spec["nodeSelector"] = dict(sel)
        return self

    def toleration(self, key: str) -> PodWrapper:
        # st.Toleration: operator Exists, no effect (tolerates every effect of that key).
        self._spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists"})
        return self

    def _node_affinity_expr(self, key: str, op: str, values: list[str]) -> PodWrapper:
        na = self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        req = na.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": [{}]})
        term = req["nodeSelectorTerms"][0]
        term.setdefault("matchExpressions", []).append({"key": key, "operator": op, "values": list(values)})
        return self

    def node_affinity_in(self, key: str, values: list[str]) -> PodWrapper:
        return self._node_affinity_expr(key, "In", values)

    def node_affinity_not_in(self, key: str, values: list[str]) -> PodWrapper:
        return self._node_affinity_expr(key, "NotIn", values)

    def spread_constraint(
        self,
        max_skew: int,
        key: str,
        when: str,
        selector: Obj | None,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: list[str] | None = None,
    ) -> PodWrapper:
        c: Obj = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
        if selector is not None:
            c["labelSelector"] = copy.deepcopy(selector)
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = list(match_label_keys)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def _pod_affinity_term(
        self,
        kind: str,
        required: bool,
        key: str,
        selector: Obj | None,
        namespaces: list[str] | None,
        ns_selector: Obj | None,
        weight: int,
        match_label_keys: list[str] | None,
        mismatch_label_keys: list[str] | None,
    ) -> PodWrapper:
        term: Obj = {"topologyKey": key}
        if selector is not None:
            term["labelSelector"] = copy.deepcopy(selector)
        if namespaces is not None:
            term["namespaces"] = list(namespaces)
        if ns_selector is not None:
            term["namespaceSelector"] = copy.deepcopy(ns_selector)
        if match_label_keys is not None:
            term["matchLabelKeys"] = list(match_label_keys)
        if mismatch_label_keys is not None:
            term["mismatchLabelKeys"] = list(mismatch_label_keys)
        section = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        if required:
            section.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            section.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term}
            )
        return self

    def pod_affinity(
        self,
        key: str,
        selector: Obj | None,
        namespaces: list[str] | None = None,
        ns_selector: Obj | None = None,
        match_label_keys: list[str] | None = None,
        mismatch_label_keys: list[str] | None = None,
    ) -> PodWrapper:
        return self._pod_affinity_term(
            "podAffinity",
            True,
            key,
            selector,
            namespaces,
            ns_selector,
            0,
            match_label_keys,
            mismatch_label_keys,
        )

    def pod_anti_affinity(
        self,
        key: str,
        selector: Obj | None,
        namespaces: list[str] | None = None,
        ns_selector: Obj | None = None,
        match_label_keys: list[str] | None = None,
        mismatch_label_keys: list[str] | None = None,
    ) -> PodWrapper:
        return self._pod_affinity_term(
            "podAntiAffinity",
            True,
            key,
            selector,
            namespaces,
            ns_selector,
            0,
            match_label_keys,
            mismatch_label_keys,
        )

    def preferred_pod_affinity(
        self,
        weight: int,
        key: str,
        selector: Obj | None,
        namespaces: list[str] | None = None,
        ns_selector: Obj | None = None,
    ) -> PodWrapper:
        return self._pod_affinity_term(
            "podAffinity", False, key, selector, namespaces, ns_selector, weight, None, None
        )

    def preferred_pod_anti_affinity(
        self,
        weight: int,
        key: str,
        selector: Obj | None,
        namespaces: list[str] | None = None,
        ns_selector: Obj | None = None,
    ) -> PodWrapper:
        return self._pod_affinity_term(
            "podAntiAffinity", False, key, selector, namespaces, ns_selector, weight, None, None
        )

    # ---------------------------------------------------------------- preemption (default_preemption_test.go)
    def req(self, requests: dict[str, Any]) -> PodWrapper:
        """Req(): a container requesting `requests` (this wrapper also keeps its request-less default
        container; basic_builders.BasicPod starts empty, as upstream)."""
        n = len(self._spec["containers"])
        res = {k: str(v) for k, v in requests.items()}
        self._spec["containers"].append({"name": f"con{n}", "image": "pause", "resources": {"requests": res}})
        return self

    def start_time(self, ts: str) -> PodWrapper:
        self._status["startTime"] = ts
        return self

    def nominated_node_name(self, node: str) -> PodWrapper:
        self._status["nominatedNodeName"] = node
        return self

    def preemption_policy(self, policy: str) -> PodWrapper:
        self._spec["preemptionPolicy"] = policy
        return self

    def condition(self, ctype: str, status: str, reason: str) -> PodWrapper:
        self._status.setdefault("conditions", []).append({"type": ctype, "status": status, "reason": reason})
        return self

    def scheduler_name(self, name: str) -> PodWrapper:
        self._spec["schedulerName"] = name
        return self

    def resource_claims(self, claims: list[Obj]) -> PodWrapper:
        """PodResourceClaims(): spec.resourceClaims entries ({"name", "resourceClaimName"|...})."""
        self._spec.setdefault("resourceClaims", []).extend(copy.deepcopy(claims))
        return self

    def raw(self) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": copy.deepcopy(self._meta),
            "spec": copy.deepcopy(self._spec),
            "status": copy.deepcopy(self._status) or {"phase": "Pending"},
        }

    def obj(self, dialect: Dialect = V134) -> Pod:
        p = Pod(self.raw())
        finish_pod(p, dialect)
        return p


def make_pod() -> PodWrapper:
    return PodWrapper()


class NodeWrapper:
    """st.MakeNode()."""

    def __init__(self) -> None:
        self._meta: Obj = {"name": ""}
        self._spec: Obj = {}
        self._status: Obj = {"allocatable": {"cpu": "32", "memory": "64Gi", "pods": "110"}}

    def name(self, name: str) -> NodeWrapper:
        self._meta["name"] = name
        return self

    def label(self, key: str, value: str) -> NodeWrapper:
        self._meta.setdefault("labels", {})[key] = value
        return self

    def taints(self, taints: list[Obj]) -> NodeWrapper:
        self._spec["taints"] = copy.deepcopy(taints)
        return self

    def capacity(self, res: dict[str, Any]) -> NodeWrapper:
        """Capacity(): capacity and allocatable set to `res`, with pods 32 unless `res` names it."""
        alloc = {"pods": "32"}
        alloc.update({k: str(v) for k, v in res.items()})
        self._status["allocatable"] = alloc
        self._status["capacity"] = dict(alloc)
        return self

    def raw(self) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": copy.deepcopy(self._meta),
            "spec": copy.deepcopy(self._spec),
            "status": copy.deepcopy(self._status),
        }

    def obj(self) -> Node:
        return Node(self.raw())


def make_node() -> NodeWrapper:
    return NodeWrapper()


def new_snapshot(
    pods: list[Pod] | None,
    nodes: list[Node] | None,
    objects: dict[str, list[Obj]] | None = None,
    dialect: Dialect = V134,
) -> Snapshot:
    """cache.NewSnapshot(pods, nodes) plus the informer objects (Services, Namespaces, ...) a case lists."""
    objs = objects or {}
    return Snapshot(dialect, nodes or [], pods or [], objs, present=objs.keys())


def new_plugin(cls: type[Plugin], snap: Snapshot, args: dict[str, Any] | None = None) -> Plugin:
    return cls(Handle(snap, snap.dialect, args or {}))


# ---------------------------------------------------------------- DRA (st.MakeResourceClaim, st.MakeResourceSlice)


def make_resource_slice(node: str, driver: str, devices: list[tuple[str, Obj | None]]) -> Obj:
    """st.MakeResourceSlice(node, driver).Device(name, attributes)...: pool <node>, one slice, nodeName set.
    `attributes` maps a qualified name to a DeviceAttribute dict ({"bool": True}, {"string": "x"}, ...)."""
    devs: list[Obj] = []
    for name, attrs in devices:
        d: Obj = {"name": name}
        if attrs:
            d["attributes"] = copy.deepcopy(attrs)
        devs.append(d)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "nodeName": node,
            "driver": driver,
            "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
            "devices": devs,
        },
    }


def device_class(name: str, selectors: list[str] | None = None) -> Obj:
    spec: Obj = {}
    if selectors:
        spec["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


def sub_request(name: str, class_name: str, count: int = 1, selector: str = "") -> Obj:
    """st.SubRequest / st.SubRequestWithSelector (the latter: count 1)."""
    sub: Obj = {"name": name, "deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}
    if selector:
        sub["selectors"] = [{"cel": {"expression": selector}}]
    return sub


class ResourceClaimWrapper:
    """st.MakeResourceClaim(): requests are named req-1, req-2, ... as upstream."""

    def __init__(self) -> None:
        self._meta: Obj = {"name": "", "namespace": "default", "uid": ""}
        self._spec: Obj = {"devices": {"requests": []}}
        self._status: Obj = {}

    def name(self, name: str) -> ResourceClaimWrapper:
        self._meta["name"] = name
        self._meta["uid"] = self._meta["uid"] or name
        return self

    def namespace(self, ns: str) -> ResourceClaimWrapper:
        self._meta["namespace"] = ns
        return self

    def _next(self) -> str:
        return f"req-{len(self._spec['devices']['requests']) + 1}"

    def request(
        self, class_name: str, count: int = 1, selectors: list[str] | None = None
    ) -> ResourceClaimWrapper:
        exactly: Obj = {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}
        if selectors:
            exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
        self._spec["devices"]["requests"].append({"name": self._next(), "exactly": exactly})
        return self

    def request_all(self, class_name: str) -> ResourceClaimWrapper:
        exactly: Obj = {"deviceClassName": class_name, "allocationMode": "All"}
        self._spec["devices"]["requests"].append({"name": self._next(), "exactly": exactly})
        return self

    def request_with_prioritized_list(self, *subs: Obj) -> ResourceClaimWrapper:
        self._spec["devices"]["requests"].append(
            {"name": self._next(), "firstAvailable": copy.deepcopy(list(subs))}
        )
        return self

    def admin_access(self) -> ResourceClaimWrapper:
        """adminAccess() of dynamicresources_test.go: every exact request (and allocated result) gets it."""
        for r in self._spec["devices"]["requests"]:
            if "exactly" in r:
                r["exactly"]["adminAccess"] = True
        for res in self._status.get("allocation", {}).get("devices", {}).get("results", []):
            res["adminAccess"] = True
        return self

    def constraint(self, attribute: str, requests: list[str] | None = None) -> ResourceClaimWrapper:
        c: Obj = {"matchAttribute": attribute}
        if requests is not None:
            c["requests"] = list(requests)
        self._spec["devices"].setdefault("constraints", []).append(c)
        return self

    def owner_reference(self, name: str, uid: str, kind: str = "Pod") -> ResourceClaimWrapper:
        self._meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": kind, "name": name, "uid": uid, "controller": True}
        ]
        return self

    def allocation(self, results: list[Obj], node_selector: Obj | None = None) -> ResourceClaimWrapper:
        alloc: Obj = {"devices": {"results": copy.deepcopy(results)}}
        if node_selector is not None:
            alloc["nodeSelector"] = copy.deepcopy(node_selector)
        self._status["allocation"] = alloc
        return self

    def reserved_for_pod(self, name: str, uid: str) -> ResourceClaimWrapper:
        self._status.setdefault("reservedFor", []).append({"resource": "pods", "name": name, "uid": uid})
        return self

    def deleting(self) -> ResourceClaimWrapper:
        self._meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        return self

    def obj(self) -> Obj:
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": copy.deepcopy(self._meta),
            "spec": copy.deepcopy(self._spec),
            "status": copy.deepcopy(self._status),
        }

    def copy(self) -> ResourceClaimWrapper:
        w = ResourceClaimWrapper()
        w._meta, w._spec, w._status = (
            copy.deepcopy(self._meta),
            copy.deepcopy(self._spec),
            copy.deepcopy(self._status),
        )
        return w


def make_resource_claim() -> ResourceClaimWrapper:
    return ResourceClaimWrapper()
