"""Ports of pkg/scheduler/framework/types_test.go against kdiagnose.model.snapshot.NodeInfo and the per-pod
accounting of kdiagnose.model.requests.finish_pod (PodInfo.CalculateResource): TestNodeInfoAddPod,
TestNodeInfoRemovePod, TestPodInfoCalculateResources, TestCalculatePodResourcesWithResize; and of
pkg/scheduler/util/pod_resources_test.go (TestGetNonZeroRequest, TestGetRequestForResource).

Not ported: Generation counters, ImageStates, DeclaredFeatures, NodeInfo.Snapshot/String, queue ordering
(Go-only bookkeeping); the DRA node-allocatable claim cases (alpha DRANodeAllocatableResources gate).
The resize cases that set InPlacePodLevelResourcesVerticalScaling (alpha) expect the same numbers as with
the gate off (pod-level spec requests win), so they run as v1.34 here.
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Pod
from kdiagnose.model.requests import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, pod_requests
from kdiagnose.model.snapshot import NodeInfo
from tests.upstream.basic_builders import V134, BasicPod, make_node, make_pod

Obj = dict[str, Any]
MI = 1024**2
NS = "node_info_cache_test"


def _ni(*pods: Pod) -> NodeInfo:
    """fakeNodeInfo(pods...)."""
    ni = NodeInfo(make_node().name("test-node").obj())
    for p in pods:
        ni.add_pod(p)
    return ni


def _port(port: int) -> list[Obj]:
    return [{"hostIP": "127.0.0.1", "hostPort": port, "protocol": "TCP"}]


def _bound(name: str) -> BasicPod:
    return make_pod().name(name).uid(name).namespace(NS).node("test-node")


def _with_ports(w: BasicPod, requests: dict[str, Any], port: int) -> BasicPod:
    """A single container with requests and a hostPort, as the upstream literals."""
    w.spec(
        containers=[
            {
                "name": "c",
                "image": "pause",
                "resources": {"requests": {k: str(v) for k, v in requests.items()}},
                "ports": _port(port),
            }
        ]
    )
    return w


def _add_pod_fixture() -> list[Pod]:
    p1 = (
        _with_ports(_bound("test-1"), {"cpu": "100m", "memory": "500"}, 80)
        .overhead({"cpu": "500m"})
        .pvc_volume("pvc-1")
    )
    p2 = (
        _with_ports(_bound("test-2"), {"cpu": "200m"}, 8080)
        .overhead({"cpu": "500m", "memory": "500"})
        .pvc_volume("pvc-1")
    )
    p3 = (
        _with_ports(_bound("test-3"), {"cpu": "200m"}, 8080)
        .init_req({"cpu": "500m", "memory": "200Mi"})
        .overhead({"cpu": "500m", "memory": "500"})
        .pvc_volume("pvc-2")
    )
    return [p1.obj(), p2.obj(), p3.obj()]


def test_node_info_add_pod() -> None:
    pods = _add_pod_fixture()
    ni = _ni(*pods)
    assert ni.requested == {"cpu": 2300, "memory": 209716700}  # 1500 + 200Mi of the init container
    assert (ni.non_zero_cpu, ni.non_zero_mem) == (2300, 419431900)  # 200Mi init + 200Mi default + 1500
    # HostPortInfo is a set: test-2 and test-3 both declare 127.0.0.1:8080/TCP.
    assert set(ni.used_ports) == {("127.0.0.1", "TCP", 80), ("127.0.0.1", "TCP", 8080)}
    assert ni.pvc_ref_counts == {f"{NS}/pvc-1": 2, f"{NS}/pvc-2": 1}
    assert [p.name for p in ni.pods] == ["test-1", "test-2", "test-3"]
    # cachedResource of each PodInfo.
    got = [(p.requests, p.non_zero_cpu, p.non_zero_mem) for p in pods]
    assert got == [
        ({"cpu": 600, "memory": 500}, 600, 500),
        ({"cpu": 700, "memory": 500}, 700, DEFAULT_MEMORY_REQUEST + 500),
        ({"cpu": 1000, "memory": DEFAULT_MEMORY_REQUEST + 500}, 1000, DEFAULT_MEMORY_REQUEST + 500),
    ]


def _remove_fixture() -> tuple[NodeInfo, BasicPod]:
    oh = {"cpu": "500m", "memory": "500"}
    w1 = _with_ports(_bound("test-1"), {"cpu": "100m", "memory": "500"}, 80).pvc_volume("pvc-1").overhead(oh)
    w2 = _with_ports(_bound("test-2"), {"cpu": "200m", "memory": "1Ki"}, 8080).overhead(oh)
    return _ni(w1.obj(), w2.obj()), w1


@pytest.mark.parametrize(
    ("uid", "want_requested", "want_ports", "want_pvcs", "want_pods"),
    [
        pytest.param(
            "non-exist",
            {"cpu": 1300, "memory": 2524},
            {("127.0.0.1", "TCP", 80), ("127.0.0.1", "TCP", 8080)},
            {f"{NS}/pvc-1": 1},
            ["test-1", "test-2"],
            id="removing a pod the node does not have changes nothing",
        ),
        pytest.param(
            "test-1",
            {"cpu": 700, "memory": 1524},
            {("127.0.0.1", "TCP", 8080)},
            {},
            ["test-2"],
            id="removing a copy of a bound pod (same UID) subtracts it",
        ),
    ],
)
def test_node_info_remove_pod(
    uid: str,
    want_requested: dict[str, int],
    want_ports: set[tuple[str, str, int]],
    want_pvcs: dict[str, int],
    want_pods: list[str],
) -> None:
    """TestNodeInfoRemovePod: RemovePod finds the pod by UID (GetPodKey)."""
    ni, w1 = _remove_fixture()
    victim = w1.uid(uid).obj()  # a fresh object, as upstream passes a new *v1.Pod literal
    ni.remove_pod(victim)
    assert {k: v for k, v in ni.requested.items() if v} == want_requested
    assert (ni.non_zero_cpu, ni.non_zero_mem) == (want_requested["cpu"], want_requested["memory"])
    assert set(ni.used_ports) == want_ports
    assert ni.pvc_ref_counts == want_pvcs
    assert [p.name for p in ni.pods] == want_pods


def test_ephemeral_volumes_are_not_pvc_ref_counted() -> None:
    """updatePVCRefCounts counts spec.volumes[].persistentVolumeClaim only (framework/types.go)."""
    p = (
        _bound("eph")
        .spec(volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}])
        .obj()
    )
    assert _ni(p).pvc_ref_counts == {}


# ------------------------------------------------------------------ TestPodInfoCalculateResources
R = dict[str, str]
CPU500, MEM500, CPU700, MEM800, CPU1200, MEM1200 = "500m", "500Mi", "700m", "800Mi", "1200m", "1200Mi"


def _calc_pod(
    containers: list[R], init: list[tuple[R, bool]] | None = None, pod_level: R | None = None
) -> Pod:
    w = make_pod().name("p")
    for i, r in enumerate(containers):
        w.named_container(f"c{i}", r)
    for i, (r, sidecar) in enumerate(init or ()):
        w.named_container(f"i{i}", r, init=True, restart_policy="Always" if sidecar else "")
    if pod_level is not None:
        w.pod_level_requests(pod_level)
    return w.obj(V134)


@pytest.mark.parametrize(
    ("pod", "want_requests", "want_non0"),
    [
        pytest.param(
            _calc_pod([{}]),
            {},
            (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST),
            id="requestless container",
        ),
        pytest.param(
            _calc_pod([{"cpu": CPU500, "memory": MEM500}]),
            {"cpu": 500, "memory": 500 * MI},
            (500, 500 * MI),
            id="1X container with requests",
        ),
        pytest.param(
            _calc_pod([{"cpu": CPU500, "memory": MEM500}, {"cpu": CPU700, "memory": MEM800}]),
            {"cpu": 1200, "memory": 1300 * MI},
            (1200, 1300 * MI),
            id="2X container with requests",
        ),
        pytest.param(
            _calc_pod(
                [{"cpu": CPU500, "memory": MEM500}],
                [({"cpu": CPU500, "memory": MEM500}, False)],
                {"cpu": CPU1200, "memory": MEM1200},
            ),
            {"cpu": 1200, "memory": 1200 * MI},
            (1200, 1200 * MI),
            id="1X container and 1X init container with pod-level requests",
        ),
        pytest.param(
            _calc_pod(
                [{"cpu": CPU500, "memory": MEM500}],
                [({"cpu": CPU500, "memory": MEM500}, True)],
                {"cpu": CPU1200, "memory": MEM1200},
            ),
            {"cpu": 1200, "memory": 1200 * MI},
            (1200, 1200 * MI),
            id="1X container and 1X sidecar container with pod-level requests",
        ),
        pytest.param(
            _calc_pod([{}], [({}, False)], {"memory": MEM1200}),
            {"memory": 1200 * MI},
            (DEFAULT_MILLI_CPU_REQUEST, 1200 * MI),
            id="1X container with pod-level memory requests",
        ),
        pytest.param(
            _calc_pod([{}], [({}, False)], {"cpu": CPU500}),
            {"cpu": 500},
            (500, DEFAULT_MEMORY_REQUEST),
            id="1X container with pod-level cpu requests",
        ),
        pytest.param(
            _calc_pod(
                [{"ephemeral-storage": MEM800}], [({"ephemeral-storage": MEM500}, False)], {"cpu": CPU500}
            ),
            {"cpu": 500, "ephemeral-storage": 800 * MI},
            (500, DEFAULT_MEMORY_REQUEST),
            id="1X container unsupported resources and pod-level supported resources",
        ),
    ],
)
def test_pod_info_calculate_resources(
    pod: Pod, want_requests: dict[str, int], want_non0: tuple[int, int]
) -> None:
    assert pod.requests == want_requests
    assert (pod.non_zero_cpu, pod.non_zero_mem) == want_non0


# ------------------------------------------------------------------ TestCalculatePodResourcesWithResize
def _resize_pod(
    requests: R,
    status: R,
    pod_level: R | None = None,
    pod_level_status: R | None = None,
    init: tuple[R, R] | None = None,
    sidecar: tuple[R, R] | None = None,
    conditions: list[tuple[str, str]] = (),  # type: ignore[assignment]
) -> Pod:
    """preparePodInfo: c1 (+ i1, + sidecar s1) with status resources; bound, so statuses count."""
    w = make_pod().name("testpod").namespace("pod_resize_test").node("n")
    if pod_level is not None:
        w.pod_level_requests(pod_level)
    if pod_level_status is not None:
        w._status["resources"] = {"requests": dict(pod_level_status)}  # not read: the gate is alpha
    w.named_container("c1", requests).container_status("c1", status)
    if init is not None:
        w.named_container("i1", init[0], init=True).container_status("i1", init[1], init=True)
    if sidecar is not None:
        w.named_container("s1", sidecar[0], init=True, restart_policy="Always")
        w.container_status("s1", sidecar[1], init=True)
    for ctype, reason in conditions:
        w.resize_condition(ctype, reason)
    return w.obj(V134)


CM500: R = {"cpu": CPU500, "memory": MEM500}
CM700: R = {"cpu": CPU700, "memory": MEM500}
CM78: R = {"cpu": CPU700, "memory": MEM800}


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(_resize_pod(CM500, CM500), (500, 500 * MI), id="Pod with no pending resize"),
        pytest.param(
            _resize_pod(CM500, CM700, pod_level=CM700, pod_level_status=CM500),
            (700, 500 * MI),
            id="Pod with pod-level resources no pending resize",
        ),
        pytest.param(
            _resize_pod(CM500, CM500, conditions=[("PodResizeInProgress", "")]),
            (500, 500 * MI),
            id="Pod with resize in progress",
        ),
        pytest.param(
            _resize_pod(
                CM500,
                CM700,
                pod_level=CM700,
                pod_level_status=CM500,
                conditions=[("PodResizeInProgress", "")],
            ),
            (700, 500 * MI),
            id="Pod with pod-level resources and resize in progress",
        ),
        pytest.param(
            _resize_pod(CM78, CM500, conditions=[("PodResizePending", "Deferred")]),
            (700, 800 * MI),
            id="Pod with deferred resize",
        ),
        pytest.param(
            _resize_pod(
                CM500,
                CM500,
                pod_level=CM78,
                pod_level_status=CM500,
                conditions=[("PodResizePending", "Deferred")],
            ),
            (700, 800 * MI),
            id="Pod with pod-level resources and with deferred resize",
        ),
        pytest.param(
            _resize_pod(CM78, CM500, conditions=[("PodResizePending", "Infeasible")]),
            (500, 500 * MI),
            id="Pod with infeasible resize",
        ),
        pytest.param(
            _resize_pod(CM500, CM500, init=(CM78, CM78)),
            (700, 800 * MI),
            id="Pod with init container and no pending resize",
        ),
        pytest.param(
            _resize_pod(CM500, CM500, init=(CM78, CM78), sidecar=(CM78, CM78)),
            (1200, 1300 * MI),
            id="Pod with sider container and no pending resize",
        ),
    ],
)
def test_calculate_pod_resources_with_resize(pod: Pod, want: tuple[int, int]) -> None:
    assert (pod.requests.get("cpu"), pod.requests.get("memory")) == want
    assert (pod.non_zero_cpu, pod.non_zero_mem) == want


def test_sidecar_resize_status_counts() -> None:
    """A sidecar's actuated resources come from status.initContainerStatuses (AggregateContainerRequests
    indexes both status lists by name): a sidecar resized up beyond its spec counts at the larger size."""
    pod = _resize_pod(CM500, CM500, sidecar=({"cpu": "100m"}, {"cpu": "300m"}))
    assert pod.requests["cpu"] == 800


# ------------------------------------------------------------------ pod_resources_test.go
def _one(requests: R) -> Pod:
    return make_pod().name("p").named_container("c", requests).obj(V134)


@pytest.mark.parametrize(
    ("requests", "want"),
    [
        pytest.param({}, (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST), id="cpu_and_memory_not_found"),
        pytest.param({"cpu": "200m"}, (200, DEFAULT_MEMORY_REQUEST), id="only_cpu_exist"),
        pytest.param({"memory": "400Mi"}, (DEFAULT_MILLI_CPU_REQUEST, 400 * MI), id="only_memory_exist"),
        pytest.param({"cpu": "200m", "memory": "400Mi"}, (200, 400 * MI), id="cpu_memory_exist"),
    ],
)
def test_get_non_zero_request(requests: R, want: tuple[int, int]) -> None:
    """TestGetNonZeroRequest: the scoring defaults apply to a container that does not request the resource."""
    pod = _one(requests)
    assert (pod.non_zero_cpu, pod.non_zero_mem) == want


@pytest.mark.parametrize(
    ("requests", "resource", "want", "non_zero"),
    [
        pytest.param({}, "intel.com/foo", 0, True, id="extended_resource_not_found"),
        pytest.param({"intel.com/foo": "4"}, "intel.com/foo", 4, True, id="extended_resource_found"),
        pytest.param({}, "cpu", DEFAULT_MILLI_CPU_REQUEST, True, id="cpu_not_found"),
        pytest.param({}, "memory", DEFAULT_MEMORY_REQUEST, True, id="memory_not_found"),
        pytest.param({"cpu": "200m"}, "cpu", 200, True, id="cpu_exist"),
        pytest.param({"memory": "400Mi"}, "memory", 400 * MI, True, id="memory_exist"),
        pytest.param(
            {"ephemeral-storage": "400Mi"}, "ephemeral-storage", 400 * MI, True, id="ephemeralStorage_exist"
        ),
        pytest.param({}, "ephemeral-storage", 0, True, id="ephemeralStorage_not_found"),
        pytest.param({}, "cpu", 0, False, id="cpu_not_found, useRequested is true"),
        pytest.param({}, "memory", 0, False, id="memory_not_found, useRequested is true"),
    ],
)
def test_get_request_for_resource(requests: R, resource: str, want: int, non_zero: bool) -> None:
    """TestGetRequestForResource, as v1.34's calculatePodResourceRequest does it: PodRequests with the
    100m/200Mi NonMissingContainerRequests unless useRequested."""
    got = pod_requests(_one(requests), V134, use_status=True, non_missing=non_zero)
    assert got.get(resource, 0) == want
