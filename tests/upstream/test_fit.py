"""Port of upstream noderesources/fit_test.go (TestEnoughRequests, TestNotEnoughRequests, TestStorageRequests,
TestFitScore), least_allocated_test.go, most_allocated_test.go and requested_to_capacity_ratio_test.go
(TestRequestedToCapacityRatioScoringStrategy, TestBrokenLinearFunction, TestResourceBinPacking*Extended).

The upstream Filter tables predate v1.34's UnschedulableAndUnresolvable for requests above the whole
allocatable; each case runs on v1.33 (Unschedulable, as the table says) and v1.34 (UU where the request
exceeds allocatable, fit.go `Unresolvable`). Skipped: TestPreFilterDisabled (Go CycleState error text),
TestRestartableInitContainers (the SidecarContainers gate is on in every replayed release), the argument
validation cases (negative/zero/too-large weights, resources unset: config-loader concerns, v1 defaulting
fills resources), TestEventsToRegister / isSchedulableAfter* (queueing hints), benchmarks.
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import MAX_NODE_SCORE, Code, CycleState
from kdiagnose.scheduler.plugins.noderesources.fit import Fit, broken_linear
from kdiagnose.versions import dialect_for
from tests.upstream.basic_builders import make_node, make_pod, resource_node
from tests.upstream.builders import new_plugin, new_snapshot

Obj = dict[str, Any]
EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_A = "kubernetes.io/something"
K8S_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"


def _res(cpu: int = 0, mem: int = 0, storage: int = 0, **scalars: int) -> Obj:
    """newResourcePod's per-container ResourceList: cpu (millicores), memory, pods and ephemeral-storage are
    always present, scalars only when given."""
    r: Obj = {"cpu": f"{cpu}m", "memory": mem, "pods": 0, "ephemeral-storage": storage}
    r.update({k.replace("__", "/"): v for k, v in scalars.items()})
    return r


def _sc(name: str, value: int, cpu: int = 0, mem: int = 0) -> Obj:
    r = _res(cpu, mem)
    r[name] = value
    return r


def _alloc(milli_cpu: int, memory: int, pods: int, ext_a: int, storage: int, huge_a: int) -> Obj:
    """makeAllocatableResources."""
    return {
        "cpu": f"{milli_cpu}m",
        "memory": memory,
        "pods": pods,
        EXT_A: ext_a,
        "ephemeral-storage": storage,
        HUGE_A: huge_a,
    }


def _pod(
    containers: list[Obj],
    init: list[Obj] | None = None,
    overhead: Obj | None = None,
    node: str = "",
    version: str = "v1.34.1",
) -> Pod:
    w = make_pod().name("pod" if not node else "existing")
    for c in containers:
        w.req(c)
    for c in init or ():
        w.init_req(c)
    if overhead:
        w.overhead(overhead)
    if node:
        w.node(node)
    return w.obj(dialect_for(version))


def _run_filter(
    pod_containers: list[Obj],
    pod_init: list[Obj] | None,
    existing: Obj,
    alloc: Obj,
    version: str,
    args: Obj | None = None,
    overhead: Obj | None = None,
) -> Any:
    dialect = dialect_for(version)
    node = make_node().name("n").capacity(alloc).obj()
    snap = new_snapshot([_pod([existing], node="n", version=version)], [node], dialect=dialect)
    pl = new_plugin(Fit, snap, args)
    pod = _pod(pod_containers, pod_init, overhead, version=version)
    state = CycleState()
    _, st = pl.pre_filter(state, pod)
    assert st.ok
    return pl.filter(state, pod, snap.node_infos[0])


# (pod containers, init containers, existing pod's request, args, overhead, reasons, over allocatable)
ENOUGH_REQUESTS = [
    pytest.param([], None, _res(10, 20), None, None, (), False, id="no resources requested always fits"),
    pytest.param(
        [_res(1, 1)],
        None,
        _res(10, 20),
        None,
        None,
        ("Insufficient cpu", "Insufficient memory"),
        False,
        id="too many resources fails",
    ),
    pytest.param(
        [_res(1, 1)],
        [_res(3, 1)],
        _res(8, 19),
        None,
        None,
        ("Insufficient cpu",),
        False,
        id="too many resources fails due to init container cpu",
    ),
    pytest.param(
        [_res(1, 1)],
        [_res(3, 1), _res(2, 1)],
        _res(8, 19),
        None,
        None,
        ("Insufficient cpu",),
        False,
        id="too many resources fails due to highest init container cpu",
    ),
    pytest.param(
        [_res(1, 1)],
        [_res(1, 3)],
        _res(9, 19),
        None,
        None,
        ("Insufficient memory",),
        False,
        id="too many resources fails due to init container memory",
    ),
    pytest.param(
        [_res(1, 1)],
        [_res(1, 3), _res(1, 2)],
        _res(9, 19),
        None,
        None,
        ("Insufficient memory",),
        False,
        id="too many resources fails due to highest init container memory",
    ),
    pytest.param(
        [_res(1, 1)],
        [_res(1, 1)],
        _res(9, 19),
        None,
        None,
        (),
        False,
        id="init container fits because it's the max, not sum, of containers and init containers",
    ),
    pytest.param(
        [_res(1, 1)],
        [_res(1, 1), _res(1, 1)],
        _res(9, 19),
        None,
        None,
        (),
        False,
        id="multiple init containers fit because it's the max, not sum, of containers and init containers",
    ),
    pytest.param([_res(1, 1)], None, _res(5, 5), None, None, (), False, id="both resources fit"),
    pytest.param(
        [_res(2, 1)],
        None,
        _res(9, 5),
        None,
        None,
        ("Insufficient cpu",),
        False,
        id="one resource memory fits",
    ),
    pytest.param(
        [_res(1, 2)],
        None,
        _res(5, 19),
        None,
        None,
        ("Insufficient memory",),
        False,
        id="one resource cpu fits",
    ),
    pytest.param([_res(5, 1)], None, _res(5, 19), None, None, (), False, id="equal edge case"),
    pytest.param(
        [_res(4, 1)],
        [_res(5, 1)],
        _res(5, 19),
        None,
        None,
        (),
        False,
        id="equal edge case for init container",
    ),
    pytest.param([_sc(EXT_A, 1)], None, _res(), None, None, (), False, id="extended resource fits"),
    pytest.param(
        [_res()],
        [_sc(EXT_A, 1)],
        _res(),
        None,
        None,
        (),
        False,
        id="extended resource fits for init container",
    ),
    pytest.param(
        [_sc(EXT_A, 10, 1, 1)],
        None,
        _sc(EXT_A, 0),
        None,
        None,
        (f"Insufficient {EXT_A}",),
        True,
        id="extended resource capacity enforced",
    ),
    pytest.param(
        [_res()],
        [_sc(EXT_A, 10, 1, 1)],
        _sc(EXT_A, 0),
        None,
        None,
        (f"Insufficient {EXT_A}",),
        True,
        id="extended resource capacity enforced for init container",
    ),
    pytest.param(
        [_sc(EXT_A, 1, 1, 1)],
        None,
        _sc(EXT_A, 5),
        None,
        None,
        (f"Insufficient {EXT_A}",),
        False,
        id="extended resource allocatable enforced",
    ),
    pytest.param(
        [_res()],
        [_sc(EXT_A, 1, 1, 1)],
        _sc(EXT_A, 5),
        None,
        None,
        (f"Insufficient {EXT_A}",),
        False,
        id="extended resource allocatable enforced for init container",
    ),
    pytest.param(
        [_sc(EXT_A, 3, 1, 1), _sc(EXT_A, 3, 1, 1)],
        None,
        _sc(EXT_A, 2),
        None,
        None,
        (f"Insufficient {EXT_A}",),
        True,
        id="extended resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        [_res()],
        [_sc(EXT_A, 3, 1, 1), _sc(EXT_A, 3, 1, 1)],
        _sc(EXT_A, 2),
        None,
        None,
        (),
        False,
        id="extended resource allocatable admits multiple init containers",
    ),
    pytest.param(
        [_res()],
        [_sc(EXT_A, 6, 1, 1), _sc(EXT_A, 3, 1, 1)],
        _sc(EXT_A, 2),
        None,
        None,
        (f"Insufficient {EXT_A}",),
        True,
        id="extended resource allocatable enforced for multiple init containers",
    ),
    pytest.param(
        [_sc(EXT_B, 1, 1, 1)],
        None,
        _res(),
        None,
        None,
        (f"Insufficient {EXT_B}",),
        True,
        id="extended resource allocatable enforced for unknown resource",
    ),
    pytest.param(
        [_res()],
        [_sc(EXT_B, 1, 1, 1)],
        _res(),
        None,
        None,
        (f"Insufficient {EXT_B}",),
        True,
        id="extended resource allocatable enforced for unknown resource for init container",
    ),
    pytest.param(
        [_sc(K8S_A, 10, 1, 1)],
        None,
        _res(),
        None,
        None,
        (f"Insufficient {K8S_A}",),
        True,
        id="kubernetes.io resource capacity enforced",
    ),
    pytest.param(
        [_res()],
        [_sc(K8S_B, 10, 1, 1)],
        _res(),
        None,
        None,
        (f"Insufficient {K8S_B}",),
        True,
        id="kubernetes.io resource capacity enforced for init container",
    ),
    pytest.param(
        [_sc(HUGE_A, 10, 1, 1)],
        None,
        _sc(HUGE_A, 0),
        None,
        None,
        (f"Insufficient {HUGE_A}",),
        True,
        id="hugepages resource capacity enforced",
    ),
    pytest.param(
        [_res()],
        [_sc(HUGE_A, 10, 1, 1)],
        _sc(HUGE_A, 0),
        None,
        None,
        (f"Insufficient {HUGE_A}",),
        True,
        id="hugepages resource capacity enforced for init container",
    ),
    pytest.param(
        [_sc(HUGE_A, 3, 1, 1), _sc(HUGE_A, 3, 1, 1)],
        None,
        _sc(HUGE_A, 2),
        None,
        None,
        (f"Insufficient {HUGE_A}",),
        True,
        id="hugepages resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        [_sc(EXT_B, 1, 1, 1)],
        None,
        _res(),
        {"ignoredResources": [EXT_B]},
        None,
        (),
        False,
        id="skip checking ignored extended resource",
    ),
    pytest.param(
        [_res(1, 1)],
        None,
        _res(5, 5),
        None,
        {"cpu": "3m", "memory": "13"},
        (),
        False,
        id="resources + pod overhead fits",
    ),
    pytest.param(
        [_res(1, 1)],
        None,
        _res(5, 5),
        None,
        {"cpu": "1m", "memory": "15"},
        ("Insufficient memory",),
        False,
        id="requests + overhead does not fit for memory",
    ),
    pytest.param(
        [{**_res(1, 1), EXT_B: 1, K8S_A: 1}],
        None,
        _res(),
        {"ignoredResourceGroups": ["example.com"]},
        None,
        (f"Insufficient {K8S_A}",),
        True,
        id="skip checking ignored extended resource via resource groups",
    ),
    pytest.param(
        [_sc(EXT_A, 0, 1, 1)],
        None,
        _sc(EXT_A, 6),
        None,
        None,
        (),
        False,
        id="skip checking extended resource request with quantity zero via resource groups",
    ),
    pytest.param(
        [{EXT_A: 1}],
        None,
        _sc(EXT_A, 1, 20, 30),
        None,
        None,
        (),
        False,
        id="skip checking resource request with quantity zero",
    ),
]


@pytest.mark.parametrize(
    ("containers", "init", "existing", "args", "overhead", "reasons", "over"), ENOUGH_REQUESTS
)
@pytest.mark.parametrize("version", ["v1.33.3", "v1.34.1"])
def test_enough_requests(
    containers: list[Obj],
    init: list[Obj] | None,
    existing: Obj,
    args: Obj | None,
    overhead: Obj | None,
    reasons: tuple[str, ...],
    over: bool,
    version: str,
) -> None:
    st = _run_filter(containers, init, existing, _alloc(10, 20, 32, 5, 20, 5), version, args, overhead)
    if not reasons:
        assert st.ok
        return
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if over and version >= "v1.34" else Code.UNSCHEDULABLE
    assert (st.code, st.reasons) == (code, reasons)


@pytest.mark.parametrize(
    ("containers", "init", "existing"),
    [
        pytest.param(
            [],
            None,
            _res(10, 20),
            id="even without specified resources, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            [_res(1, 1)],
            None,
            _res(5, 5),
            id="even if both resources fit, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            [_res(5, 1)],
            None,
            _res(5, 19),
            id="even for equal edge case, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            [_res(5, 1)],
            [_res(5, 1)],
            _res(5, 19),
            id="even for equal edge case, predicate fails when there's no space for additional pod due to init "
            "container",
        ),
    ],
)
def test_not_enough_requests(containers: list[Obj], init: list[Obj] | None, existing: Obj) -> None:
    # "Too many pods" is never UnschedulableAndUnresolvable (fit.go leaves Unresolvable unset for pods).
    st = _run_filter(containers, init, existing, _alloc(10, 20, 1, 0, 0, 0), "v1.34.1")
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE, ("Too many pods",))


@pytest.mark.parametrize(
    ("containers", "init", "existing", "reasons"),
    [
        pytest.param([_res(1, 1)], None, _res(2, 10), (), id="empty storage requested, and pod fits"),
        pytest.param(
            [_res(storage=25)],
            None,
            _res(2, 2),
            ("Insufficient ephemeral-storage",),
            id="storage ephemeral local storage request exceeds allocatable",
        ),
        pytest.param([_res(storage=5)], [], _res(2, 2, 10), (), id="ephemeral local storage is sufficient"),
        pytest.param([_res(storage=10)], None, _res(2, 2), (), id="pod fits"),
    ],
)
def test_storage_requests(
    containers: list[Obj], init: list[Obj] | None, existing: Obj, reasons: tuple[str, ...]
) -> None:
    st = _run_filter(containers, init, existing, _alloc(10, 20, 32, 5, 20, 5), "v1.33.3")
    assert st.reasons == reasons
    assert st.ok is (not reasons)


# ---- scoring -----------------------------------------------------------------------------------------

DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXT_RES = "vendor.io/extended"
EXT_RESOURCE_SET = [*DEFAULT_RESOURCES, {"name": EXT_RES, "weight": 1}]


def _node(name: str, cap: Obj) -> Node:
    return make_node().name(name).capacity(cap).obj()


def _existing(node: str, req: Obj | None = None) -> Pod:
    w = make_pod().name(f"e-{node}-{id(req)}").node(node)
    if req is not None:
        w.req(req)
    return w.obj()


def _scores(
    strategy: Obj, pod: Pod, nodes: list[Node], existing: list[Pod], run_pre_score: bool = True
) -> dict[str, int]:
    snap = new_snapshot(existing, nodes)
    pl = new_plugin(Fit, snap, {"scoringStrategy": strategy})
    state = CycleState()
    if run_pre_score:
        assert pl.pre_score(state, pod, snap.node_infos).ok
    out = {}
    for ni in snap.node_infos:
        s, st = pl.score(state, pod, ni)
        assert st.ok
        out[ni.name] = s
    return out


def _req_pod(*reqs: Obj) -> Pod:
    w = make_pod().name("incoming")
    for r in reqs:
        w.req(r)
    return w.obj()


N4_6 = [("node1", {"cpu": "4000", "memory": "10000"}), ("node2", {"cpu": "6000", "memory": "10000"})]
FIT_SCORE_EXISTING = [
    ("node1", {"cpu": "2000", "memory": "4000"}),
    ("node2", {"cpu": "1000", "memory": "2000"}),
]


def _rtcr(shape: list[tuple[int, int]], resources: list[Obj] | None = None) -> Obj:
    return {
        "type": "RequestedToCapacityRatio",
        "resources": resources or DEFAULT_RESOURCES,
        "requestedToCapacityRatio": {"shape": [{"utilization": u, "score": s} for u, s in shape]},
    }


@pytest.mark.parametrize("run_pre_score", [True, False], ids=["", "if PreScore is not called"])
@pytest.mark.parametrize(
    ("strategy", "req", "expected"),
    [
        pytest.param(
            _rtcr([(0, 10), (100, 0)]),
            {"cpu": "3000", "memory": "5000"},
            {"node1": 10, "node2": 32},
            id="test case for ScoringStrategy RequestedToCapacityRatio case1",
        ),
        pytest.param(
            _rtcr([(0, 0), (100, 10)]),
            {"cpu": "3000", "memory": "5000"},
            {"node1": 95, "node2": 68},
            id="test case for ScoringStrategy RequestedToCapacityRatio case2",
        ),
        pytest.param(
            {"type": "MostAllocated", "resources": DEFAULT_RESOURCES},
            {"cpu": "1000", "memory": "2000"},
            {"node1": 67, "node2": 36},
            id="test case for ScoringStrategy MostAllocated",
        ),
        pytest.param(
            {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES},
            {"cpu": "1000", "memory": "2000"},
            {"node1": 32, "node2": 63},
            id="test case for ScoringStrategy LeastAllocated",
        ),
    ],
)
def test_fit_score(strategy: Obj, req: Obj, expected: dict[str, int], run_pre_score: bool) -> None:
    nodes = [_node(n, c) for n, c in N4_6]
    existing = [_existing(n, r) for n, r in FIT_SCORE_EXISTING]
    assert _scores(strategy, _req_pod(req), nodes, existing, run_pre_score) == expected


C1 = {"cpu": "1000", "memory": "2000"}
C2 = {"cpu": "2000", "memory": "3000"}


@pytest.mark.parametrize(
    ("pod_reqs", "nodes", "existing", "resources", "expected"),
    [
        pytest.param(
            [],
            [("node1", {"cpu": "4000", "memory": "10000"}), ("node2", {"cpu": "4000", "memory": "10000"})],
            [],
            DEFAULT_RESOURCES,
            {"node1": MAX_NODE_SCORE, "node2": MAX_NODE_SCORE},
            id="nothing scheduled, nothing requested",
        ),
        pytest.param(
            [C1, C2],
            N4_6,
            [],
            DEFAULT_RESOURCES,
            {"node1": 37, "node2": 50},
            id="nothing scheduled, resources requested, differently sized nodes",
        ),
        pytest.param(
            [],
            [("node1", {"cpu": "4000", "memory": "10000"}), ("node2", {"cpu": "4000", "memory": "10000"})],
            [("node1", None), ("node1", None), ("node2", None), ("node2", None)],
            DEFAULT_RESOURCES,
            {"node1": MAX_NODE_SCORE, "node2": MAX_NODE_SCORE},
            id="no resources requested, pods scheduled",
        ),
        pytest.param(
            [],
            [("node1", {"cpu": "10000", "memory": "20000"}), ("node2", {"cpu": "10000", "memory": "20000"})],
            [
                ("node1", {"cpu": "3000", "memory": "0"}),
                ("node1", {"cpu": "3000", "memory": "0"}),
                ("node2", {"cpu": "3000", "memory": "0"}),
                ("node2", {"cpu": "3000", "memory": "5000"}),
            ],
            DEFAULT_RESOURCES,
            {"node1": 70, "node2": 57},
            id="no resources requested, pods scheduled with resources",
        ),
        pytest.param(
            [C1, C2],
            [("node1", {"cpu": "10000", "memory": "20000"}), ("node2", {"cpu": "10000", "memory": "20000"})],
            [("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})],
            DEFAULT_RESOURCES,
            {"node1": 57, "node2": 45},
            id="resources requested, pods scheduled with resources",
        ),
        pytest.param(
            [C1, C2],
            [("node1", {"cpu": "10000", "memory": "20000"}), ("node2", {"cpu": "10000", "memory": "50000"})],
            [("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})],
            DEFAULT_RESOURCES,
            {"node1": 57, "node2": 60},
            id="resources requested, pods scheduled with resources, differently sized nodes",
        ),
        pytest.param(
            [{"cpu": "3000", "memory": "0"}],
            [("node1", {"cpu": "4000", "memory": "10000"}), ("node2", {"cpu": "4000", "memory": "10000"})],
            [("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})],
            DEFAULT_RESOURCES,
            {"node1": 50, "node2": 25},
            id="requested resources exceed node capacity",
        ),
        pytest.param(
            [],
            [("node1", {}), ("node2", {})],
            [("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})],
            DEFAULT_RESOURCES,
            {"node1": 0, "node2": 0},
            id="zero node resources, pods scheduled with resources",
        ),
        pytest.param(
            [C1, C2],
            N4_6,
            [],
            [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
            {"node1": 41, "node2": 50},
            id="nothing scheduled, resources requested with different weight on CPU and memory, differently sized "
            "nodes",
        ),
        pytest.param(
            [C1, C2],
            [
                ("node1", {"cpu": "6000", "memory": "10000"}),
                ("node2", {"cpu": "6000", "memory": "10000", EXT_RES: "4"}),
            ],
            [],
            EXT_RESOURCE_SET,
            {"node1": 50, "node2": 50},
            id="bypass extended resource if the pod does not request",
        ),
        pytest.param(
            [{"cpu": "3000", "memory": "5000", EXT_RES: "2"}],
            [
                ("node1", {"cpu": "6000", "memory": "10000", EXT_RES: "4"}),
                ("node2", {"cpu": "6000", "memory": "10000", EXT_RES: "10"}),
            ],
            [],
            EXT_RESOURCE_SET,
            {"node1": 50, "node2": 60},
            id="honor extended resource if the pod requests",
        ),
        pytest.param(
            [{"cpu": "3000", "memory": "4000"}],
            [
                ("node1", {"cpu": "6000", "memory": "10000"}),
                ("node2", {"cpu": "6000", "memory": "10000", EXT_RES: "4"}),
            ],
            [],
            [{"name": EXT_RES, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            {"node1": 55, "node2": 55},
            id="if the node doesn't have a resource",
        ),
    ],
)
def test_least_allocated_scoring_strategy(
    pod_reqs: list[Obj],
    nodes: list[tuple[str, Obj]],
    existing: list[tuple[str, Obj | None]],
    resources: list[Obj],
    expected: dict[str, int],
) -> None:
    got = _scores(
        {"type": "LeastAllocated", "resources": resources},
        _req_pod(*pod_reqs),
        [_node(n, c) for n, c in nodes],
        [_existing(n, r) for n, r in existing],
    )
    assert got == expected


@pytest.mark.parametrize(
    ("pod_reqs", "nodes", "existing", "expected"),
    [
        pytest.param(
            [],
            [("node1", {"cpu": "4000", "memory": "10000"}), ("node2", {"cpu": "4000", "memory": "10000"})],
            [("node1", None), ("node1", None)],
            {"node1": MAX_NODE_SCORE, "node2": MAX_NODE_SCORE},
            id="nothing scheduled, nothing requested (default - least requested nodes have priority)",
        ),
        pytest.param(
            [C1, C2],
            N4_6,
            [("node1", None), ("node1", None)],
            {"node1": 38, "node2": 50},
            id="nothing scheduled, resources requested, differently sized nodes (default - least requested nodes "
            "have priority)",
        ),
        pytest.param(
            [],
            N4_6,
            [("node1", {"cpu": "3000", "memory": "5000"}), ("node2", {"cpu": "3000", "memory": "5000"})],
            {"node1": 38, "node2": 50},
            id="no resources requested, pods scheduled with resources (default - least requested nodes have "
            "priority)",
        ),
    ],
)
def test_requested_to_capacity_ratio_scoring_strategy(
    pod_reqs: list[Obj],
    nodes: list[tuple[str, Obj]],
    existing: list[tuple[str, Obj | None]],
    expected: dict[str, int],
) -> None:
    got = _scores(
        _rtcr([(0, 10), (100, 0)]),
        _req_pod(*pod_reqs),
        [_node(n, c) for n, c in nodes],
        [_existing(n, r) for n, r in existing],
        run_pre_score=False,
    )
    assert got == expected


@pytest.mark.parametrize(
    ("points", "assertions"),
    [
        pytest.param(
            [(10, 1), (90, 9)],
            [
                (-10, 1),
                (0, 1),
                (9, 1),
                (10, 1),
                (15, 1),
                (19, 1),
                (20, 2),
                (89, 8),
                (90, 9),
                (99, 9),
                (100, 9),
                (110, 9),
            ],
            id="case_0",
        ),
        pytest.param(
            [(0, 2), (40, 10), (100, 0)],
            [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
            id="case_1",
        ),
        pytest.param(
            [(0, 2), (40, 2), (100, 2)],
            [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
            id="case_2",
        ),
    ],
)
def test_broken_linear_function(points: list[tuple[int, int]], assertions: list[tuple[int, int]]) -> None:
    f = broken_linear(points)
    assert [(p, f(p)) for p, _ in assertions] == assertions


MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("pod_req", "existing", "expected"),
    [
        pytest.param(None, [], {"node1": 0, "node2": 0}, id="nothing scheduled, nothing requested"),
        pytest.param(
            {"intel.com/foo": "2"},
            [(None, None)],
            {"node1": 2, "node2": 5},
            id="resources requested, pods scheduled with less resources",
        ),
        pytest.param(
            {"intel.com/foo": "2"},
            [("node2", {"intel.com/foo": "2"})],
            {"node1": 2, "node2": 10},
            id="resources requested, pods scheduled with resources, on node with existing pod running ",
        ),
        pytest.param(
            {"intel.com/foo": "4"},
            [(None, None)],
            {"node1": 5, "node2": 10},
            id="resources requested, pods scheduled with more resources",
        ),
    ],
)
def test_resource_bin_packing_single_extended(
    pod_req: Obj | None, existing: list[tuple[str | None, Obj | None]], expected: dict[str, int]
) -> None:
    nodes = [
        resource_node("node1", 4000, 10000 * MIB, {"intel.com/foo": 8}),
        resource_node("node2", 4000, 10000 * MIB, {"intel.com/foo": 4}),
    ]
    pods = [_existing(n, r) for n, r in existing if n]
    pod = _req_pod(pod_req) if pod_req else _req_pod()
    strategy = _rtcr([(0, 0), (100, 1)], [{"name": "intel.com/foo", "weight": 1}])
    assert _scores(strategy, pod, nodes, pods, run_pre_score=False) == expected


@pytest.mark.parametrize(
    ("pod_req", "expected"),
    [
        pytest.param(None, {"node1": 0, "node2": 0}, id="nothing scheduled, nothing requested"),
        pytest.param(
            {"intel.com/foo": "2", "intel.com/bar": "2"},
            {"node1": 4, "node2": 3},
            id="resources requested, pods scheduled with less resources",
        ),
    ],
)
def test_resource_bin_packing_multiple_extended(pod_req: Obj | None, expected: dict[str, int]) -> None:
    nodes = [
        resource_node("node1", 4000, 10000 * MIB, {"intel.com/foo": 8, "intel.com/bar": 4}),
        resource_node("node2", 4000, 10000 * MIB, {"intel.com/foo": 4, "intel.com/bar": 8}),
    ]
    pod = _req_pod(pod_req) if pod_req else _req_pod()
    strategy = _rtcr(
        [(0, 0), (100, 1)], [{"name": "intel.com/foo", "weight": 3}, {"name": "intel.com/bar", "weight": 5}]
    )
    assert _scores(strategy, pod, nodes, [], run_pre_score=False) == expected


@pytest.mark.parametrize("version", ["v1.33.3", "v1.34.1"])
def test_batch_filter_compares_only_what_the_pod_requests_on_overcommitted_nodes(version: str) -> None:
    """kdiagnose's batch Filter (filter_many) against `filter` node by node, on nodes whose bound pods
    request more than their allocatable of one resource each (fitsRequest compares a fixed resource only
    when the pod requests it: a BestEffort pod fits an overcommitted node)."""
    dialect = dialect_for(version)
    alloc = {"cpu": "1", "memory": 2**30, "pods": 10, "ephemeral-storage": 2**30}
    over = {"cpu": _res(cpu=2000), "memory": _res(mem=2**31), "ephemeral-storage": _res(storage=2**31)}
    nodes = [make_node().name(f"over-{r}").capacity(alloc).obj() for r in over]
    existing = [_pod([req], node=f"over-{r}", version=version) for r, req in over.items()]
    snap = new_snapshot(existing, nodes, dialect=dialect)
    pl = new_plugin(Fit, snap)
    wants = {
        "best-effort": [True, True, True],
        "cpu only": [False, True, True],
        "memory only": [True, False, True],
        "storage only": [True, True, False],
    }
    reqs = {"best-effort": [], "cpu only": [_res(cpu=100)], "memory only": [_res(mem=100)]}
    reqs["storage only"] = [_res(storage=100)]
    for what, want in wants.items():
        pod = _pod(reqs[what], version=version)
        state = CycleState()
        _, st = pl.pre_filter(state, pod)
        assert st.ok
        got = pl.filter_many(state, pod, snap.node_infos)
        assert got == [pl.filter(state, pod, ni) for ni in snap.node_infos], what
        assert [s.ok for s in got] == want, what
