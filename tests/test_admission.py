"""API-server defaulting and admission (load/admission.py) against v1.34's defaults.go and admission plugins.

Expected values are read off the upstream code (pkg/apis/core/v1/defaults.go, plugin/pkg/admission/*,
pkg/util/tolerations) and its tests, not from kdiagnose's output."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kdiagnose.load.admission import AdmissionContext, admit_pod, admit_pvc, merge_tolerations
from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.quantity import parse_quantity
from kdiagnose.versions import dialect_for

Obj = dict[str, Any]

NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
UNREACHABLE = {
    "key": "node.kubernetes.io/unreachable",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}


def pod(spec: Obj, name: str = "p", namespace: str = "default") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def ctr(name: str = "c", requests: Obj | None = None, limits: Obj | None = None, **extra: Any) -> Obj:
    res: Obj = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": name, "image": "img", "resources": res, **extra}


def ctx(
    pcs: list[Obj] | None = None,
    lrs: list[Obj] | None = None,
    rcs: list[Obj] | None = None,
    scs: list[Obj] | None = None,
) -> AdmissionContext:
    return AdmissionContext(pcs or [], lrs or [], rcs or [], scs or [])


def admit(spec: Obj, c: AdmissionContext | None = None, namespace: str = "default") -> tuple[Obj, list[str]]:
    rejected: list[str] = []
    obj = admit_pod(pod(spec, namespace=namespace), c or ctx(), rejected)
    return obj["spec"], rejected


def same_quantities(got: Obj, want: Obj) -> bool:
    return got.keys() == want.keys() and all(parse_quantity(got[k]) == parse_quantity(want[k]) for k in want)


def limit_range(*items: Obj, namespace: str = "default") -> Obj:
    return {
        "kind": "LimitRange",
        "metadata": {"name": "lr", "namespace": namespace},
        "spec": {"limits": list(items)},
    }


def pclass(name: str, value: int, **extra: Any) -> Obj:
    return {"kind": "PriorityClass", "metadata": {"name": name}, "value": value, **extra}


# ---------------------------------------------------------------------------------------------- SetDefaults_Pod


@pytest.mark.parametrize(
    ("spec", "want_requests"),
    [
        pytest.param(
            {"containers": [ctr(limits={"cpu": "1", "memory": "1Gi"})]},
            [{"cpu": "1", "memory": "1Gi"}],
            id="a container's limits become its missing requests",
        ),
        pytest.param(
            {"containers": [ctr(requests={"cpu": "200m"}, limits={"cpu": "1", "memory": "1Gi"})]},
            [{"cpu": "200m", "memory": "1Gi"}],
            id="an explicit request is kept, only the missing resource is copied",
        ),
        pytest.param(
            {"initContainers": [ctr("i", limits={"cpu": "2"})], "containers": [ctr()]},
            [{}, {"cpu": "2"}],
            id="init containers get their limits copied too",
        ),
    ],
)
def test_requests_default_to_limits(spec: Obj, want_requests: list[Obj]) -> None:
    got, rejected = admit(spec)
    containers = [*got.get("initContainers", []), *got["containers"]]
    requests = [c["resources"].get("requests", {}) for c in containers]
    assert rejected == []
    assert sorted(map(str, requests)) == sorted(map(str, want_requests))


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(
            {"resources": {"limits": {"cpu": "2"}}, "containers": [ctr(requests={"cpu": "500m"})]},
            {"limits": {"cpu": "2"}, "requests": {"cpu": "500m"}},
            id="pod-level requests default to the containers' requests when those set the resource",
        ),
        pytest.param(
            {"resources": {"limits": {"cpu": "2", "memory": "1Gi"}}, "containers": [ctr()]},
            {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "2", "memory": "1Gi"}},
            id="pod-level requests default to the pod-level limits when no container requests",
        ),
        pytest.param(
            {
                "resources": {"limits": {"cpu": "4"}},
                "initContainers": [
                    ctr("sidecar", requests={"cpu": "300m"}, restartPolicy="Always"),
                    ctr("init", requests={"cpu": "1"}),
                ],
                "containers": [ctr("a", requests={"cpu": "200m"}), ctr("b", requests={"cpu": "100m"})],
            },
            {"limits": {"cpu": "4"}, "requests": {"cpu": "1300m"}},
            id="the containers' aggregate counts sidecars and the largest init step (1 + 300m sidecar)",
        ),
        pytest.param(
            {
                "resources": {"limits": {"cpu": "1"}},
                "containers": [ctr(limits={"hugepages-2Mi": "10Mi"})],
            },
            {
                "limits": {"cpu": "1", "hugepages-2Mi": "10Mi"},
                "requests": {"cpu": "1", "hugepages-2Mi": "10Mi"},
            },
            id="containers' hugepage limits become pod-level limits, then pod-level requests",
        ),
        pytest.param(
            {
                "resources": {"requests": {"cpu": "1"}},
                "containers": [ctr(requests={"memory": "1Gi"})],
            },
            {"requests": {"cpu": "1"}},
            id="without pod-level limits the pod-level requests are left as they are",
        ),
        pytest.param(
            {
                "resources": {"limits": {"cpu": "2", "example.com/dongle": "1"}},
                "containers": [ctr(requests={"example.com/dongle": "1"}, limits={"example.com/dongle": "1"})],
            },
            {"limits": {"cpu": "2", "example.com/dongle": "1"}, "requests": {"cpu": "2"}},
            id="only cpu, memory and hugepages are pod-level resources",
        ),
    ],
)
def test_pod_level_resource_defaults(spec: Obj, want: Obj) -> None:
    got, _ = admit(spec)
    res = got["resources"]
    assert res.keys() == want.keys()
    for field in want:
        assert same_quantities(res[field], want[field]), (field, res[field])


@pytest.mark.parametrize(
    ("host_network", "ports", "want"),
    [
        pytest.param(
            True,
            [{"containerPort": 8080}],
            [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}],
            id="hostNetwork makes the containerPort the hostPort",
        ),
        pytest.param(
            True,
            [{"containerPort": 8080, "hostPort": 9090}],
            [{"containerPort": 8080, "hostPort": 9090, "protocol": "TCP"}],
            id="hostNetwork keeps an explicit hostPort",
        ),
        pytest.param(
            False,
            [{"containerPort": 53, "protocol": "UDP"}],
            [{"containerPort": 53, "protocol": "UDP"}],
            id="without hostNetwork no hostPort is added",
        ),
    ],
)
def test_host_network_ports(host_network: bool, ports: list[Obj], want: list[Obj]) -> None:
    got, _ = admit({"hostNetwork": host_network, "containers": [ctr(ports=ports)]})
    assert got["containers"][0]["ports"] == want


def test_scheduler_name_defaults() -> None:
    assert admit({"containers": [ctr()]})[0]["schedulerName"] == "default-scheduler"
    assert admit({"schedulerName": "mine", "containers": [ctr()]})[0]["schedulerName"] == "mine"


# ---------------------------------------------------------------------------------------------- LimitRanger


@pytest.mark.parametrize(
    ("item", "container", "want"),
    [
        pytest.param(
            {"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "100m"}},
            ctr(),
            {"limits": {"cpu": "1"}, "requests": {"cpu": "100m"}},
            id="default and defaultRequest fill an unset resource",
        ),
        pytest.param(
            {"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}},
            ctr(limits={"cpu": "2"}),
            {"limits": {"cpu": "2"}, "requests": {"cpu": "2"}},
            id="a set limit was copied into the request at decode, before LimitRanger ran",
        ),
        pytest.param(
            {"type": "Container", "default": {"memory": "512Mi"}},
            ctr(),
            {"limits": {"memory": "512Mi"}, "requests": {"memory": "512Mi"}},
            id="a default without defaultRequest also defaults the request (SetDefaults_LimitRangeItem)",
        ),
        pytest.param(
            {"type": "Container", "max": {"cpu": "2"}},
            ctr(),
            {"limits": {"cpu": "2"}, "requests": {"cpu": "2"}},
            id="max alone becomes the default limit and request",
        ),
        pytest.param(
            {"type": "Container", "min": {"cpu": "50m"}},
            ctr(),
            {"requests": {"cpu": "50m"}},
            id="min alone becomes the default request, no limit",
        ),
        pytest.param(
            {"type": "Pod", "max": {"cpu": "2"}},
            ctr(),
            {},
            id="a Pod-type item defaults nothing",
        ),
        pytest.param(
            {"type": "Container", "defaultRequest": {"memory": "64Mi"}},
            ctr(requests={"memory": "1Gi"}),
            {"requests": {"memory": "1Gi"}},
            id="an explicit request is never overridden",
        ),
    ],
)
def test_limit_ranger(item: Obj, container: Obj, want: Obj) -> None:
    got, rejected = admit({"containers": [container]}, ctx(lrs=[limit_range(item)]))
    res = {k: v for k, v in got["containers"][0]["resources"].items() if v}
    assert rejected == []
    assert res == want


def test_limit_ranger_defaults_init_containers_and_only_its_namespace() -> None:
    lr = limit_range({"type": "Container", "defaultRequest": {"cpu": "100m"}}, namespace="team")
    spec = {"initContainers": [ctr("i")], "containers": [ctr()]}
    got, _ = admit(copy.deepcopy(spec), ctx(lrs=[lr]), namespace="team")
    assert got["initContainers"][0]["resources"]["requests"] == {"cpu": "100m"}
    assert got["containers"][0]["resources"]["requests"] == {"cpu": "100m"}
    other, _ = admit(copy.deepcopy(spec), ctx(lrs=[lr]), namespace="default")
    assert other["containers"][0]["resources"].get("requests") in (None, {})


def test_limit_range_default_below_explicit_request_is_rejected() -> None:
    lr = limit_range({"type": "Container", "default": {"cpu": "500m"}})
    _, rejected = admit({"containers": [ctr(requests={"cpu": "1"})]}, ctx(lrs=[lr]))
    assert rejected == [
        'spec.containers[0].resources.requests[cpu]: Invalid value: "1": must be less than or equal to cpu limit of 500m'
    ]


@pytest.mark.parametrize(
    ("container", "want"),
    [
        pytest.param(
            ctr(requests={"nvidia.com/gpu": "1"}),
            [
                "spec.containers[0].resources.limits: Required value: "
                "Limit must be set for non overcommitable resources"
            ],
            id="an extended resource requested without a limit",
        ),
        pytest.param(
            ctr(requests={"nvidia.com/gpu": "1"}, limits={"nvidia.com/gpu": "2"}),
            [
                'spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "1": '
                "must be equal to nvidia.com/gpu limit of 2"
            ],
            id="an extended resource whose request differs from its limit",
        ),
        pytest.param(
            ctr(limits={"nvidia.com/gpu": "1"}), [], id="an extended resource given as a limit only"
        ),
    ],
)
def test_request_limit_validation(container: Obj, want: list[str]) -> None:
    assert admit({"containers": [container]})[1] == want


# ---------------------------------------------------------------------------------------------- Priority


@pytest.mark.parametrize(
    ("spec", "classes", "want"),
    [
        pytest.param(
            {"priorityClassName": "batch"},
            [pclass("batch", 50, preemptionPolicy="Never")],
            {"priority": 50, "preemptionPolicy": "Never", "priorityClassName": "batch"},
            id="value and preemptionPolicy come from the class",
        ),
        pytest.param(
            {"priorityClassName": "batch"},
            [pclass("batch", 50)],
            {"priority": 50, "preemptionPolicy": "PreemptLowerPriority", "priorityClassName": "batch"},
            id="a class without preemptionPolicy means PreemptLowerPriority",
        ),
        pytest.param(
            {},
            [pclass("a", 1000, globalDefault=True), pclass("b", 10, globalDefault=True)],
            {"priority": 10, "preemptionPolicy": "PreemptLowerPriority", "priorityClassName": "b"},
            id="no class: the lowest-valued global default, whose name is recorded",
        ),
        pytest.param(
            {},
            [pclass("a", 1000)],
            {"priority": 0, "preemptionPolicy": "PreemptLowerPriority"},
            id="no class and no global default: priority 0",
        ),
        pytest.param(
            {"priorityClassName": "system-node-critical"},
            [pclass("a", 1)],
            {
                "priority": 2000001000,
                "preemptionPolicy": "PreemptLowerPriority",
                "priorityClassName": "system-node-critical",
            },
            id="system-node-critical exists in every cluster",
        ),
        pytest.param(
            {"priorityClassName": "system-cluster-critical"},
            [],
            {
                "priority": 2000000000,
                "preemptionPolicy": "PreemptLowerPriority",
                "priorityClassName": "system-cluster-critical",
            },
            id="system-cluster-critical exists in every cluster",
        ),
    ],
)
def test_priority(spec: Obj, classes: list[Obj], want: Obj) -> None:
    got, rejected = admit({**spec, "containers": [ctr()]}, ctx(pcs=classes))
    assert rejected == []
    assert {k: got[k] for k in ("priority", "preemptionPolicy", "priorityClassName") if k in got} == want


@pytest.mark.parametrize(
    ("spec", "classes", "want"),
    [
        pytest.param(
            {"priorityClassName": "hihg"},
            [pclass("high", 1000)],
            ["no PriorityClass with name hihg was found"],
            id="a class the cluster does not have",
        ),
        pytest.param(
            {"preemptionPolicy": "Never"},
            [],
            [
                "the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority "
                "admission controller computed PreemptLowerPriority from the given PriorityClass name"
            ],
            id="a preemptionPolicy other than the class's",
        ),
    ],
)
def test_priority_rejections(spec: Obj, classes: list[Obj], want: list[str]) -> None:
    assert admit({**spec, "containers": [ctr()]}, ctx(pcs=classes))[1] == want


def test_priority_class_not_checked_without_priority_classes() -> None:
    c = AdmissionContext([], [], [], present=set())
    got, rejected = admit({"priorityClassName": "high", "containers": [ctr()]}, c)
    assert (got["priority"], rejected, dict(c.unresolved)) == (0, [], {("PriorityClass", "high"): 1})


# ---------------------------------------------------------------------------------------------- DefaultTolerationSeconds


@pytest.mark.parametrize(
    ("tolerations", "added"),
    [
        pytest.param(None, [NOT_READY, UNREACHABLE], id="both added to a pod without tolerations"),
        pytest.param([{"operator": "Exists"}], [], id="a toleration of everything covers both"),
        pytest.param(
            [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
            [NOT_READY, UNREACHABLE],
            id="a NoSchedule toleration of the key does not count",
        ),
        pytest.param(
            [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 60,
                }
            ],
            [UNREACHABLE],
            id="a NoExecute toleration of not-ready keeps its own seconds",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}],
            [NOT_READY],
            id="a toleration of every effect for unreachable counts",
        ),
        pytest.param(
            [{"operator": "Exists", "effect": "NoExecute"}],
            [],
            id="a NoExecute toleration of every key covers both",
        ),
    ],
)
def test_default_toleration_seconds(tolerations: list[Obj] | None, added: list[Obj]) -> None:
    spec: Obj = {"containers": [ctr()]}
    if tolerations is not None:
        spec["tolerations"] = copy.deepcopy(tolerations)
    got, _ = admit(spec)
    assert got["tolerations"] == [*(tolerations or []), *added]


# ---------------------------------------------------------------------------------------------- RuntimeClass


def runtime_class(name: str = "kata", **extra: Any) -> Obj:
    return {"kind": "RuntimeClass", "metadata": {"name": name}, "handler": name, **extra}


def test_runtime_class_overhead_node_selector_and_tolerations() -> None:
    rc = runtime_class(
        overhead={"podFixed": {"cpu": "250m", "memory": "160Mi"}},
        scheduling={
            "nodeSelector": {"runtime": "kata"},
            "tolerations": [{"key": "kata", "operator": "Exists", "effect": "NoSchedule"}],
        },
    )
    got, rejected = admit(
        {"runtimeClassName": "kata", "nodeSelector": {"zone": "a"}, "containers": [ctr()]}, ctx(rcs=[rc])
    )
    assert rejected == []
    assert got["overhead"] == {"cpu": "250m", "memory": "160Mi"}
    assert got["nodeSelector"] == {"zone": "a", "runtime": "kata"}
    assert got["tolerations"] == [
        NOT_READY,
        UNREACHABLE,
        {"key": "kata", "operator": "Exists", "effect": "NoSchedule"},
    ]


@pytest.mark.parametrize(
    ("spec", "rcs", "want"),
    [
        pytest.param(
            {"runtimeClassName": "kata", "nodeSelector": {"runtime": "runc"}},
            [runtime_class(scheduling={"nodeSelector": {"runtime": "kata"}})],
            [
                "conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; "
                "pod.spec.nodeSelector[runtime] = runc"
            ],
            id="a nodeSelector the RuntimeClass contradicts",
        ),
        pytest.param(
            {"runtimeClassName": "gvisor"},
            [runtime_class()],
            ['pod rejected: RuntimeClass "gvisor" not found'],
            id="a RuntimeClass the cluster does not have",
        ),
        pytest.param(
            {"runtimeClassName": "kata", "overhead": {"cpu": "100m"}},
            [runtime_class(overhead={"podFixed": {"cpu": "250m"}})],
            ["pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"],
            id="an overhead other than the RuntimeClass's",
        ),
        pytest.param(
            {"runtimeClassName": "kata", "overhead": {"cpu": "0.25"}},
            [runtime_class(overhead={"podFixed": {"cpu": "250m"}})],
            [],
            id="an overhead equal in value to the RuntimeClass's",
        ),
        pytest.param(
            {"overhead": {"cpu": "100m"}},
            [runtime_class()],
            ["pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"],
            id="an overhead without a RuntimeClass",
        ),
    ],
)
def test_runtime_class_rejections(spec: Obj, rcs: list[Obj], want: list[str]) -> None:
    assert admit({**spec, "containers": [ctr()]}, ctx(rcs=rcs))[1] == want


@pytest.mark.parametrize(
    ("first", "second", "want"),
    [
        pytest.param(
            [{"key": "a", "operator": "Exists"}],
            [{"key": "a", "operator": "Exists"}],
            [{"key": "a", "operator": "Exists"}],
            id="equal tolerations are kept once",
        ),
        pytest.param(
            [{"key": "a", "operator": "Equal", "value": "1", "effect": "NoSchedule"}],
            [{"key": "a", "operator": "Exists"}],
            [{"key": "a", "operator": "Exists"}],
            id="a wider later toleration replaces a narrower one",
        ),
        pytest.param(
            [NOT_READY],
            [{"operator": "Exists"}],
            [{"operator": "Exists"}],
            id="an empty key with Exists covers every key",
        ),
        pytest.param(
            [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}],
            [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}],
            [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}],
            id="a longer tolerationSeconds covers a shorter one",
        ),
        pytest.param(
            [{"key": "a", "operator": "Exists", "effect": "NoSchedule"}],
            [{"key": "a", "operator": "Exists", "effect": "NoExecute"}],
            [
                {"key": "a", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "a", "operator": "Exists", "effect": "NoExecute"},
            ],
            id="different effects are both kept",
        ),
    ],
)
def test_merge_tolerations(first: list[Obj], second: list[Obj], want: list[Obj]) -> None:
    assert merge_tolerations(first, second) == want


# ---------------------------------------------------------------------------------------------- admitted pods


def test_an_admitted_pod_is_not_admitted_again() -> None:
    spec = {
        "priority": 0,
        "preemptionPolicy": "PreemptLowerPriority",
        "priorityClassName": "deleted-since",
        "runtimeClassName": "also-deleted",
        "schedulerName": "default-scheduler",
        "containers": [ctr()],
    }
    c = ctx(
        pcs=[pclass("x", 1)],
        lrs=[limit_range({"type": "Container", "defaultRequest": {"cpu": "1"}})],
        rcs=[runtime_class("x")],
    )
    got, rejected = admit(copy.deepcopy(spec), c)
    assert rejected == []
    assert got == spec


def test_admission_is_idempotent() -> None:
    c = ctx(
        pcs=[pclass("batch", 7)],
        lrs=[limit_range({"type": "Container", "default": {"cpu": "1"}})],
        rcs=[runtime_class(overhead={"podFixed": {"cpu": "1"}}, scheduling={"nodeSelector": {"r": "k"}})],
    )
    once = admit_pod(
        pod(
            {
                "priorityClassName": "batch",
                "runtimeClassName": "kata",
                "hostNetwork": True,
                "containers": [ctr(ports=[{"containerPort": 80}])],
            }
        ),
        c,
    )
    twice = admit_pod(copy.deepcopy(once), c)
    assert twice == once


# ---------------------------------------------------------------------------------------------- DefaultStorageClass


def sclass(name: str, created: str, value: str = "true", beta: bool = False) -> Obj:
    key = (
        "storageclass.beta.kubernetes.io/is-default-class"
        if beta
        else "storageclass.kubernetes.io/is-default-class"
    )
    return {
        "kind": "StorageClass",
        "metadata": {"name": name, "creationTimestamp": created, "annotations": {key: value}},
    }


def pvc(spec: Obj, status: Obj | None = None, annotations: Obj | None = None) -> Obj:
    meta: Obj = {"name": "data", "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    obj: Obj = {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}
    if status:
        obj["status"] = status
    return obj


@pytest.mark.parametrize(
    ("classes", "claim", "want"),
    [
        pytest.param(
            [sclass("old", "2024-01-01T00:00:00Z"), sclass("new", "2025-01-01T00:00:00Z")],
            pvc({}),
            "new",
            id="the newest default class wins",
        ),
        pytest.param(
            [sclass("b", "2025-01-01T00:00:00Z"), sclass("a", "2025-01-01T00:00:00Z", beta=True)],
            pvc({}),
            "a",
            id="equal creation times: the lowest name, beta annotation counts",
        ),
        pytest.param(
            [sclass("x", "2025-01-01T00:00:00Z", value="True")],
            pvc({}),
            None,
            id="only the exact value true marks a default",
        ),
        pytest.param(
            [sclass("x", "2025-01-01T00:00:00Z")],
            pvc({"storageClassName": ""}),
            "",
            id="an explicit empty class is kept",
        ),
        pytest.param(
            [sclass("x", "2025-01-01T00:00:00Z")],
            pvc({}, annotations={"volume.beta.kubernetes.io/storage-class": "slow"}),
            None,
            id="a class given by the beta annotation is kept",
        ),
        pytest.param(
            [sclass("x", "2025-01-01T00:00:00Z")],
            pvc({"volumeName": "pv-1"}, status={"phase": "Bound"}),
            None,
            id="a claim created and bound without a class keeps none",
        ),
        pytest.param(
            [sclass("x", "2025-01-01T00:00:00Z")],
            pvc({}, status={"phase": "Pending"}),
            "x",
            id="an unbound claim gets the default retroactively",
        ),
    ],
)
def test_default_storage_class(classes: list[Obj], claim: Obj, want: str | None) -> None:
    got = admit_pvc(claim, ctx(scs=classes))
    assert got["spec"].get("storageClassName") == want


# ---------------------------------------------------------------------------------------------- build_snapshot


NODE = {
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


def snapshot(*objs: Obj) -> Any:
    return build_snapshot([RawObject(copy.deepcopy(o), "test.yaml") for o in objs], dialect_for("v1.34.1"))


def test_a_pod_the_api_server_rejects_is_left_out_with_a_warning() -> None:
    # The API server refuses to create it, so kube-scheduler never sees it: not replayed, and said so.
    bad = pod({"priorityClassName": "hihg", "containers": [ctr()]}, name="web")
    snap = snapshot(NODE, pclass("high", 1000), bad)
    assert [p.key for p in snap.pods] == []
    assert any(
        "pod default/web" in w and "no PriorityClass with name hihg was found" in w and "not replayed" in w
        for w in snap.warnings
    )


def test_unresolvable_classes_are_a_warning() -> None:
    snap = snapshot(NODE, pod({"priorityClassName": "high", "containers": [ctr()]}))
    assert any("PriorityClass high" in w and "priority 0 assumed" in w for w in snap.warnings)


def test_snapshot_applies_runtime_class_scheduling_and_default_storage_class() -> None:
    rc = runtime_class(scheduling={"nodeSelector": {"runtime": "kata"}})
    snap = snapshot(
        NODE,
        rc,
        sclass("std", "2025-01-01T00:00:00Z"),
        pvc({}),
        pod({"runtimeClassName": "kata", "containers": [ctr()]}),
    )
    assert snap.pods[0].node_selector == {"runtime": "kata"}
    assert snap.kind("PersistentVolumeClaim")[0]["spec"]["storageClassName"] == "std"
