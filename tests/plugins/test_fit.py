"""NodeResourcesFit: Filter reasons, codes per release, ignored resources; the three scoring strategies
with hand-computed values."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.noderesources.fit import Fit
from kdiagnose.versions import dialect_for
from tests.plugins.basic_factories import container, handle, node, pod, snapshot

GI = 1024**3


def run_filter(
    alloc: dict[str, str],
    bound: list[dict[str, str]],
    req: dict[str, str],
    version: str = "v1.34.1",
    args: dict[str, Any] | None = None,
) -> Any:
    dialect = dialect_for(version)
    bound_pods = [
        pod(f"b{i}", node="n1", containers=[container(requests=r)], dialect=dialect)
        for i, r in enumerate(bound)
    ]
    snap = snapshot([node("n1", allocatable=alloc)], bound_pods, dialect=dialect)
    pl = Fit(handle(snap, args))
    p = pod(containers=[container(requests=req)], dialect=dialect)
    state = CycleState()
    pl.pre_filter(state, p)
    return pl.filter(state, p, snap.node_infos[0])


ALLOC = {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "10Gi", "example.com/foo": "2"}


@pytest.mark.parametrize(
    ("alloc", "bound", "req", "version", "code", "reasons"),
    [
        pytest.param(ALLOC, [{"cpu": "3"}], {"cpu": "1"}, "v1.34.1", Code.SUCCESS, (), id="exact fit passes"),
        pytest.param(
            ALLOC,
            [{"cpu": "3"}],
            {"cpu": "1001m"},
            "v1.34.1",
            Code.UNSCHEDULABLE,
            ("Insufficient cpu",),
            id="one millicore over",
        ),
        pytest.param(
            ALLOC,
            [],
            {"cpu": "5"},
            "v1.34.1",
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Insufficient cpu",),
            id="over allocatable is UU in v1.34",
        ),
        pytest.param(
            ALLOC,
            [],
            {"cpu": "5"},
            "v1.33.3",
            Code.UNSCHEDULABLE,
            ("Insufficient cpu",),
            id="over allocatable is U in v1.33",
        ),
        pytest.param(
            {**ALLOC, "pods": "1"},
            [{"cpu": "3", "memory": "7Gi"}],
            {
                "cpu": "2",
                "memory": "2Gi",
                "ephemeral-storage": "11Gi",
                "example.com/foo": "3",
                "hugepages-2Mi": "2Mi",
            },
            "v1.34.1",
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (
                "Too many pods",
                "Insufficient cpu",
                "Insufficient memory",
                "Insufficient ephemeral-storage",
                "Insufficient example.com/foo",
                "Insufficient hugepages-2Mi",
            ),
            id="every insufficient resource in upstream order",
        ),
        pytest.param(
            {"cpu": "4", "memory": "8Gi"},
            [],
            {},
            "v1.34.1",
            Code.UNSCHEDULABLE,
            ("Too many pods",),
            id="no pods allocatable",
        ),
        pytest.param(
            ALLOC,
            [],
            {"example.com/bar": "1"},
            "v1.34.1",
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Insufficient example.com/bar",),
            id="unadvertised extended resource",
        ),
    ],
)
def test_filter(
    alloc: dict[str, str],
    bound: list[dict[str, str]],
    req: dict[str, str],
    version: str,
    code: Code,
    reasons: tuple[str, ...],
) -> None:
    st = run_filter(alloc, bound, req, version)
    assert st.code == code
    assert st.reasons == reasons


def test_filter_details() -> None:
    st = run_filter(ALLOC, [{"cpu": "3"}], {"cpu": "1500m"})
    assert st.details == ({"resource": "cpu", "requested": 1500, "free": 1000, "allocatable": 4000},)


@pytest.mark.parametrize(
    ("args", "ok"),
    [
        pytest.param({}, False, id="checked by default"),
        pytest.param({"ignoredResources": ["example.com/bar"]}, True, id="ignoredResources"),
        pytest.param({"ignoredResourceGroups": ["example.com"]}, True, id="ignoredResourceGroups by prefix"),
        pytest.param({"ignoredResourceGroups": ["example"]}, False, id="a group must be the whole prefix"),
    ],
)
def test_ignored_resources(args: dict[str, Any], ok: bool) -> None:
    assert run_filter(ALLOC, [], {"example.com/bar": "1"}, args=args).ok is ok


def test_ignored_resources_never_skip_hugepages() -> None:
    st = run_filter(ALLOC, [], {"hugepages-2Mi": "2Mi"}, args={"ignoredResources": ["hugepages-2Mi"]})
    assert st.reasons == ("Insufficient hugepages-2Mi",)


def score(
    strategy: dict[str, Any] | None,
    req: dict[str, str] | None,
    bound: dict[str, str] | None = None,
    alloc: dict[str, str] | None = None,
) -> int:
    bound_pods = [pod("b", node="n1", containers=[container(requests=bound)])] if bound else []
    snap = snapshot(
        [
            node(
                "n1",
                allocatable=alloc or {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/foo": "4"},
            )
        ],
        bound_pods,
    )
    pl = Fit(handle(snap, {"scoringStrategy": strategy} if strategy else {}))
    p = pod(containers=[container(requests=req)])
    state = CycleState()
    pl.pre_score(state, p, snap.node_infos)
    s, st = pl.score(state, p, snap.node_infos[0])
    assert st.ok
    return s


RTCR_UP = {
    "type": "RequestedToCapacityRatio",
    "requestedToCapacityRatio": {
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    },
}


@pytest.mark.parametrize(
    ("strategy", "req", "bound", "want"),
    [
        # cpu (4000-1300)*100/4000 = 67, memory (8-4)*100/8 = 50, (67+50)/2 = 58.
        pytest.param(
            None,
            {"cpu": "300m", "memory": "3Gi"},
            {"cpu": "1", "memory": "1Gi"},
            58,
            id="LeastAllocated default",
        ),
        # No requests: 100m and 200Mi defaults. cpu 3900*100/4000 = 97, memory 7992*100/8192 = 97.
        pytest.param(None, None, None, 97, id="LeastAllocated uses the non-zero defaults"),
        # cpu 1320*100/4000 = 33, memory 50: (33+50)/2 = 41 (truncated).
        pytest.param(
            {"type": "MostAllocated"},
            {"cpu": "320m", "memory": "3Gi"},
            {"cpu": "1", "memory": "1Gi"},
            41,
            id="MostAllocated truncates",
        ),
        # (33*3 + 50*1) / 4 = 37.
        pytest.param(
            {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
            },
            {"cpu": "320m", "memory": "3Gi"},
            {"cpu": "1", "memory": "1Gi"},
            37,
            id="MostAllocated weights",
        ),
        # Same utilizations through the 0..10 shape scaled to 0..100: round(41.5) = 42.
        pytest.param(
            RTCR_UP,
            {"cpu": "320m", "memory": "3Gi"},
            {"cpu": "1", "memory": "1Gi"},
            42,
            id="RequestedToCapacityRatio rounds",
        ),
        # foo: (1+1)*100/4 = 50 with weight 3: round((33 + 50 + 150) / 5) = round(46.6) = 47.
        pytest.param(
            {
                **RTCR_UP,
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "memory", "weight": 1},
                    {"name": "example.com/foo", "weight": 3},
                ],
            },
            {"cpu": "320m", "memory": "3Gi", "example.com/foo": "1"},
            {"cpu": "1", "memory": "1Gi", "example.com/foo": "1"},
            47,
            id="RequestedToCapacityRatio with a weighted extended resource",
        ),
        pytest.param(
            {
                **RTCR_UP,
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "memory", "weight": 1},
                    {"name": "example.com/foo", "weight": 3},
                ],
            },
            {"cpu": "320m", "memory": "3Gi"},
            {"cpu": "1", "memory": "1Gi", "example.com/foo": "1"},
            42,
            id="an extended resource the pod does not request is skipped",
        ),
        # Descending shape: cpu 100 - 33 = 67, memory 50: round(58.5) = 59.
        pytest.param(
            {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                },
            },
            {"cpu": "320m", "memory": "3Gi"},
            {"cpu": "1", "memory": "1Gi"},
            59,
            id="RequestedToCapacityRatio descending shape",
        ),
        # cpu fully used scores 0 on the ascending-from-100 shape and leaves the weights: memory alone, 50.
        pytest.param(
            {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                },
            },
            {"cpu": "3", "memory": "3Gi"},
            {"cpu": "1", "memory": "1Gi"},
            50,
            id="RequestedToCapacityRatio drops zero-score resources from the weights",
        ),
    ],
)
def test_score(
    strategy: dict[str, Any] | None, req: dict[str, str] | None, bound: dict[str, str] | None, want: int
) -> None:
    assert score(strategy, req, bound) == want


def test_score_ignores_pod_level_requests() -> None:
    # Fit's scorer is built without pod-level resources upstream: the container requests (1 cpu) count,
    # not spec.resources (3 cpu). cpu (4000-1000)*100/4000 = 75, memory (8-1)*100/8 = 87: (75+87)/2 = 81.
    snap = snapshot([node("n1")])
    pl = Fit(handle(snap))
    p = pod(
        containers=[container(requests={"cpu": "1", "memory": "1Gi"})],
        resources={"requests": {"cpu": "3", "memory": "1Gi"}},
    )
    state = CycleState()
    pl.pre_score(state, p, snap.node_infos)
    assert pl.score(state, p, snap.node_infos[0])[0] == 81
    assert p.requests["cpu"] == 3000  # while the Filter counts the pod-level request
