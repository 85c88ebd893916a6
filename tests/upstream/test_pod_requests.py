"""Ports of staging/src/k8s.io/component-helpers/resource/helpers_test.go against
kdiagnose.model.requests.pod_requests (the scheduler's PodRequests): TestPodRequestsAndLimits,
TestPodRequestsAndLimitsWithoutOverhead, TestPodResourceRequests, TestPodLevelResourceRequests,
TestAggregateContainerRequestsAndLimits, TestPodRequestsAndLimitsVerticalScalingWrappers,
TestResizeConditionsAndSupportedResources (request side only).

Not ported:
- PodLimits / AggregateContainerLimits expectations: no scheduler plugin reads pod limits (admission copies
  limits into missing requests before the scheduler sees the pod; see load/admission.py).
- ExcludeOverhead cases: the scheduler always counts overhead.
- InPlacePodLevelResourcesVerticalScalingEnabled and UseDRANodeAllocatableResourceClaimStatus cases: alpha
  gates (v1.35+), off in every release kdiagnose replays.
- NonMissingContainerRequests with a custom list: the scheduler only ever passes 100m CPU / 200Mi memory
  (tests/upstream/test_nodeinfo.py covers that path).
- TestPodResourceRequestsReuse: the Go map-reuse optimisation.
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Pod
from kdiagnose.model.requests import pod_requests
from tests.upstream.basic_builders import V134

Obj = dict[str, Any]
KI, MI, GI = 1024, 1024**2, 1024**3


def c(
    name: str = "",
    req: dict[str, str] | None = None,
    lim: dict[str, str] | None = None,
    sidecar: bool = False,
) -> Obj:
    res: Obj = {}
    if req is not None:
        res["requests"] = req
    if lim is not None:
        res["limits"] = lim
    out: Obj = {"name": name, "image": "img", "resources": res}
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


def cs(
    name: str,
    req: dict[str, str] | None = None,
    alloc: dict[str, str] | None = None,
    lim: dict[str, str] | None = None,
) -> Obj:
    """A ContainerStatus; `resources` is set (non-nil) only when req or lim is given."""
    out: Obj = {"name": name}
    if req is not None or lim is not None:
        r: Obj = {}
        if req is not None:
            r["requests"] = req
        if lim is not None:
            r["limits"] = lim
        out["resources"] = r
    if alloc is not None:
        out["allocatedResources"] = alloc
    return out


INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def mk(
    containers: list[Obj] | None = None,
    init: list[Obj] | None = None,
    overhead: dict[str, str] | None = None,
    pod_res: Obj | None = None,
    statuses: list[Obj] | None = None,
    init_statuses: list[Obj] | None = None,
    conditions: list[Obj] | None = None,
) -> Pod:
    spec: Obj = {"containers": containers or []}
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = overhead
    if pod_res is not None:
        spec["resources"] = pod_res
    status: Obj = {}
    if statuses:
        status["containerStatuses"] = statuses
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    if conditions:
        status["conditions"] = conditions
    return Pod({"metadata": {"name": "p", "namespace": "default"}, "spec": spec, "status": status})


def get_pod(
    cpu_req: str = "",
    cpu_lim: str = "",
    mem_req: str = "",
    mem_lim: str = "",
    cpu_oh: str = "",
    mem_oh: str = "",
) -> Pod:
    """getPod (helpers_test.go): the same resources on one container and one init container."""
    req = {k: v for k, v in (("cpu", cpu_req), ("memory", mem_req)) if v}
    lim = {k: v for k, v in (("cpu", cpu_lim), ("memory", mem_lim)) if v}
    oh = {k: v for k, v in (("cpu", cpu_oh), ("memory", mem_oh)) if v}
    return mk([c("foo", req, lim)], [c("init-foo", req, lim)], overhead=oh)


def _check(pod: Pod, want: dict[str, int], use_status: bool = False, pod_level: bool | None = None) -> None:
    got = pod_requests(pod, V134, use_status=use_status, non_missing=False, pod_level=pod_level)
    assert got == want


# ------------------------------------------------------------------ TestPodRequestsAndLimits (+ WithoutOverhead)
@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(get_pod(cpu_lim="9"), {}, id="just-limit-no-overhead"),
        pytest.param(get_pod(cpu_oh="5", mem_oh="5"), {"cpu": 5000, "memory": 5}, id="just-overhead"),
        pytest.param(
            get_pod(cpu_req="1", mem_req="10", cpu_oh="5", mem_oh="5"),
            {"cpu": 6000, "memory": 15},
            id="req-and-overhead",
        ),
        pytest.param(
            get_pod(cpu_req="1", cpu_lim="2", mem_req="10", mem_lim="12", cpu_oh="5", mem_oh="5"),
            {"cpu": 6000, "memory": 15},
            id="all-req-lim-and-overhead",
        ),
        pytest.param(
            get_pod(cpu_req="1", cpu_lim="2", mem_req="10", cpu_oh="5", mem_oh="5"),
            {"cpu": 6000, "memory": 15},
            id="req-some-lim-and-overhead",
        ),
        pytest.param(
            mk(
                [
                    c("foobar", {"cpu": "1", "memory": "5"}, {"cpu": "2", "memory": "10"}),
                    c("foobar2", {"cpu": "4", "memory": "12"}, {"cpu": "8", "memory": "24"}),
                ]
            ),
            {"cpu": 5000, "memory": 17},
            id="two container no overhead - should just be sum of containers",
        ),
    ],
)
def test_pod_requests_and_limits(pod: Pod, want: dict[str, int]) -> None:
    _check(pod, want)


# ------------------------------------------------------------------ TestPodResourceRequests
def _cpu(v: str) -> dict[str, str]:
    return {"cpu": v}


@pytest.mark.parametrize(
    ("pod", "use_status", "want"),
    [
        pytest.param(
            mk([c(req=_cpu("1"))], [c(req=_cpu("4"))]),
            False,
            {"cpu": 4000},
            id="nil options, larger init container",
        ),
        pytest.param(
            mk([c(req=_cpu("2")), c(req=_cpu("3"))], [c(req=_cpu("2"))]),
            False,
            {"cpu": 5000},
            id="nil options, larger containers",
        ),
        pytest.param(
            mk(
                [c(req=_cpu("2")), c(req=_cpu("3"))],
                [c(req=_cpu("2"), lim=_cpu("2"))],
                overhead={"cpu": "1", "memory": "1Gi"},
            ),
            False,
            {"cpu": 6000, "memory": GI},
            id="pod overhead included",
        ),
        pytest.param(
            mk([c("container-1", _cpu("4"))], statuses=[cs("container-1", _cpu("2"))], conditions=INFEASIBLE),
            True,
            {"cpu": 2000},
            id="resized, infeasible",
        ),
        pytest.param(
            mk(
                [c("container-1", _cpu("6"))],
                statuses=[cs("container-1", _cpu("2"), alloc=_cpu("4"))],
                conditions=INFEASIBLE,
            ),
            True,
            {"cpu": 4000},
            id="resized, infeasible & in-progress",
        ),
        pytest.param(
            mk([c("container-1", _cpu("4"))], statuses=[cs("container-1", _cpu("2"))]),
            True,
            {"cpu": 4000},
            id="resized, no resize status",
        ),
        pytest.param(
            mk(
                [c("container-1", {"cpu": "30m", "memory": "20M", "ephemeral-storage": "10G"})],
                statuses=[
                    cs(
                        "container-1",
                        {"cpu": "10m", "memory": "30M", "ephemeral-storage": "20G"},
                        alloc={"cpu": "20m", "memory": "10M", "ephemeral-storage": "30G"},
                    )
                ],
            ),
            True,
            {"cpu": 30, "memory": 30 * 10**6, "ephemeral-storage": 30 * 10**9},
            id="resized: per-resource 3-way maximum",
        ),
        pytest.param(
            mk([c("container-1", _cpu("4"))], statuses=[cs("container-1", _cpu("2"))], conditions=INFEASIBLE),
            False,
            {"cpu": 4000},
            id="resized, infeasible, but don't use status",
        ),
        pytest.param(
            mk(
                init=[c("restartable-init-1", _cpu("4"), sidecar=True)],
                init_statuses=[cs("restartable-init-1", _cpu("2"))],
                conditions=INFEASIBLE,
            ),
            True,
            {"cpu": 2000},
            id="resized, restartable init container, infeasible",
        ),
        pytest.param(
            mk(
                init=[c("restartable-init-1", _cpu("4"), sidecar=True)],
                init_statuses=[cs("restartable-init-1", _cpu("2"))],
            ),
            True,
            {"cpu": 4000},
            id="resized, restartable init container, no resize status",
        ),
        pytest.param(
            mk(
                init=[c("restartable-init-1", _cpu("4"), sidecar=True)],
                init_statuses=[cs("restartable-init-1", _cpu("2"))],
                conditions=INFEASIBLE,
            ),
            False,
            {"cpu": 4000},
            id="resized, restartable init container, infeasible, but don't use status",
        ),
        pytest.param(
            mk([c("container-1", _cpu("1"))], [c("restartable-init-1", _cpu("1"), sidecar=True)]),
            False,
            {"cpu": 2000},
            id="restartable init container",
        ),
        pytest.param(
            mk(
                [c("container-1", _cpu("1"))],
                [
                    c("init-1", _cpu("5")),
                    c("restartable-init-1", _cpu("1"), sidecar=True),
                    c("restartable-init-2", _cpu("2"), sidecar=True),
                    c("restartable-init-3", _cpu("3"), sidecar=True),
                ],
            ),
            False,
            {"cpu": 7000},
            id="multiple restartable init containers",
        ),
        pytest.param(
            mk(
                [c("container-1", _cpu("1"))],
                [
                    c("init-1", _cpu("5")),
                    c("restartable-init-1", _cpu("1"), sidecar=True),
                    c("restartable-init-2", _cpu("2"), sidecar=True),
                    c("init-2", _cpu("5")),
                    c("restartable-init-3", _cpu("3"), sidecar=True),
                ],
            ),
            False,
            {"cpu": 8000},
            id="multiple restartable and regular init containers",
        ),
        pytest.param(
            mk(
                [c("container-1", _cpu("100"))],
                [c("restartable-init-1", _cpu("10"), sidecar=True), c("init-1", _cpu("200"))],
            ),
            False,
            {"cpu": 210000},
            id="restartable-init, init and regular",
        ),
        pytest.param(
            mk(
                [c("c1", _cpu("1")), c("c2", _cpu("2"))],
                statuses=[cs("c1", alloc=_cpu("2")), cs("c2", alloc=_cpu("1"))],
            ),
            True,
            {"cpu": 3000},
            id="aggregate request resolves max of sums instead of sum of maxes",
        ),
        # TestResizeConditionsAndSupportedResources: a Deferred (or other) PodResizePending is not infeasible.
        pytest.param(
            mk(
                [c("container-1", _cpu("4"))],
                statuses=[cs("container-1", _cpu("2"))],
                conditions=[{"type": "PodResizePending", "status": "True", "reason": "Deferred"}],
            ),
            True,
            {"cpu": 4000},
            id="deferred resize is not infeasible",
        ),
    ],
)
def test_pod_resource_requests(pod: Pod, use_status: bool, want: dict[str, int]) -> None:
    _check(pod, want, use_status=use_status)


# ------------------------------------------------------------------ TestPodLevelResourceRequests
def _mc(mem: str, cpu: str) -> dict[str, str]:
    return {"memory": mem, "cpu": cpu}


@pytest.mark.parametrize(
    ("pod", "pod_level", "want"),
    [
        pytest.param(mk(pod_res={}), True, {}, id="nil"),
        pytest.param(
            mk(pod_res={"requests": {"memory": "2Mi"}}),
            False,
            {},
            id="pod level memory resource with SkipPodLevelResources true",
        ),
        pytest.param(
            mk(pod_res={"requests": {"memory": "2Mi"}}),
            True,
            {"memory": 2 * MI},
            id="pod level memory resource with SkipPodLevelResources false",
        ),
        pytest.param(
            mk([c(req={"cpu": "2m"})], pod_res={"requests": {"memory": "2Mi"}}),
            True,
            {"memory": 2 * MI, "cpu": 2},
            id="pod level memory and container level cpu resources with SkipPodLevelResources false",
        ),
        pytest.param(
            mk([c(req={"storage": "3Mi"})], pod_res={"requests": {"storage": "2Mi"}}),
            True,
            {"storage": 3 * MI},
            id="pod level unsupported resources set at both pod-level and container-level with SkipPodLevelResources false",
        ),
        pytest.param(
            mk([c(req={"memory": "3Mi"})], pod_res={"requests": {"storage": "2Mi"}}),
            True,
            {"memory": 3 * MI},
            id="pod level unsupported resources set at pod-level with SkipPodLevelResources false",
        ),
        pytest.param(
            mk([c(req=_mc("3Mi", "2m"))]),
            True,
            {"memory": 3 * MI, "cpu": 2},
            id="only container level resources set with SkipPodLevelResources false",
        ),
        pytest.param(
            mk([c(req=_mc("3Mi", "2m"))], pod_res={"requests": _mc("6Mi", "8m")}),
            True,
            {"memory": 6 * MI, "cpu": 8},
            id="both container-level and pod-level resources set with SkipPodLevelResources false",
        ),
        pytest.param(
            mk([c(req=_mc("3Mi", "2m"))], [c(req=_mc("5Mi", "4m"))]),
            True,
            {"memory": 5 * MI, "cpu": 4},
            id="container-level resources and init container set with SkipPodLevelResources false",
        ),
        pytest.param(
            mk([c(req=_mc("3Mi", "2m"))], [c(req=_mc("5Mi", "4m"))]),
            False,
            {"memory": 5 * MI, "cpu": 4},
            id="container-level resources and init container set with SkipPodLevelResources true",
        ),
        pytest.param(
            mk([c(req=_mc("3Mi", "2m"))], [c(req=_mc("5Mi", "4m"), sidecar=True)]),
            True,
            {"memory": 8 * MI, "cpu": 6},
            id="container-level resources and sidecar container set with SkipPodLevelResources false",
        ),
        pytest.param(
            mk([c(req=_mc("3Mi", "2m"))], [c(req=_mc("5Mi", "4m"), sidecar=True), c(req=_mc("6Mi", "8m"))]),
            True,
            {"memory": 11 * MI, "cpu": 12},
            id="container-level resources, init and sidecar container set with SkipPodLevelResources false",
        ),
        pytest.param(
            mk(
                [c(req=_mc("3Mi", "2m"))],
                [c(req=_mc("5Mi", "4m"), sidecar=True), c(req=_mc("6Mi", "8m"))],
                pod_res={"requests": _mc("15Mi", "18m")},
            ),
            True,
            {"memory": 15 * MI, "cpu": 18},
            id="pod-level resources, container-level resources, init and sidecar container set with SkipPodLevelResources false",
        ),
        pytest.param(
            mk(
                pod_res={
                    "limits": {"hugepages-2Mi": "2Mi"},
                    "requests": {"memory": "10Mi", "hugepages-2Mi": "2Mi"},
                }
            ),
            True,
            {"memory": 10 * MI, "hugepages-2Mi": 2 * MI},
            id="pod-level resources, hugepage request/limit single page size",
        ),
        pytest.param(
            mk(
                pod_res={
                    "limits": {"hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"},
                    "requests": {"cpu": "1", "hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"},
                }
            ),
            True,
            {"cpu": 1000, "hugepages-2Mi": 2 * MI, "hugepages-1Gi": GI},
            id="pod-level resources, hugepage request/limit multiple page sizes",
        ),
        pytest.param(
            mk(
                [c(req={"hugepages-2Mi": "6Mi"}, lim={"hugepages-2Mi": "6Mi"})],
                pod_res={
                    "limits": {"hugepages-2Mi": "10Mi"},
                    "requests": {"cpu": "1", "hugepages-2Mi": "10Mi"},
                },
            ),
            True,
            {"cpu": 1000, "hugepages-2Mi": 10 * MI},
            id="pod-level resources, container-level resources, hugepage request/limit single page size",
        ),
        pytest.param(
            mk(
                [c(req={"cpu": "1", "hugepages-1Gi": "2Gi"}, lim={"hugepages-1Gi": "2Gi"})],
                pod_res={
                    "limits": {"hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"},
                    "requests": {"cpu": "1", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"},
                },
            ),
            True,
            {"cpu": 1000, "hugepages-2Mi": 10 * MI, "hugepages-1Gi": 2 * GI},
            id="pod-level resources, container-level resources, hugepage request/limit multiple page sizes",
        ),
        pytest.param(
            mk(
                [c(req={"memory": "4Mi", "hugepages-1Gi": "1Gi"}, lim={"hugepages-1Gi": "1Gi"})],
                pod_res={
                    "limits": {"hugepages-2Mi": "10Mi"},
                    "requests": {"cpu": "1", "hugepages-2Mi": "10Mi"},
                },
            ),
            True,
            {"cpu": 1000, "memory": 4 * MI, "hugepages-2Mi": 10 * MI, "hugepages-1Gi": GI},
            id="pod-level resources, container-level resources, hugepage request/limit multiple page sizes between pod-level and container-level",
        ),
    ],
)
def test_pod_level_resource_requests(pod: Pod, pod_level: bool, want: dict[str, int]) -> None:
    _check(pod, want, pod_level=pod_level)


# ------------------------------------------------------------------ TestAggregateContainerRequestsAndLimits
@pytest.mark.parametrize(
    ("pod", "use_status", "want"),
    [
        pytest.param(mk([c(lim=_cpu("9"))]), False, {}, id="one container with limits"),
        pytest.param(mk([c(lim=_cpu("9")), c(lim=_cpu("9"))]), False, {}, id="two containers with limits"),
        pytest.param(mk([c(req=_cpu("9"))]), False, {"cpu": 9000}, id="one container with requests"),
        pytest.param(
            mk([c(req=_cpu("9")), c(req=_cpu("9"))]), False, {"cpu": 18000}, id="two containers with requests"
        ),
        pytest.param(
            mk([c(req=_cpu("9"))], [c(req=_cpu("9"))]),
            False,
            {"cpu": 9000},
            id="regular and init containers with requests",
        ),
        pytest.param(
            mk([c(req=_cpu("9"))], [c(req=_cpu("8"), sidecar=True), c(req=_cpu("6"))]),
            False,
            {"cpu": 17000},
            id="regular, init and sidecar containers with requests",
        ),
        pytest.param(
            mk([c(lim=_cpu("9"))], [c(lim=_cpu("9"))]),
            False,
            {},
            id="regular and init containers with limits",
        ),
        pytest.param(
            mk([c(lim=_cpu("9"))], [c(lim=_cpu("8"), sidecar=True), c(lim=_cpu("6"))]),
            False,
            {},
            id="regular, init and sidecar containers with limits",
        ),
        pytest.param(
            mk([c("container-1")], statuses=[cs("container-1", _cpu("2"))]),
            True,
            {"cpu": 2000},
            id="regularcontainers with empty requests, but status with non-empty requests",
        ),
        pytest.param(
            mk(init=[c("container-1", sidecar=True)], init_statuses=[cs("container-1", _cpu("2"))]),
            True,
            {"cpu": 2000},
            id="always-restart init containers with empty requests, but status with non-empty requests",
        ),
        pytest.param(
            mk(
                [c("c1", _cpu("1")), c("c2", _cpu("2"))],
                statuses=[cs("c1", alloc=_cpu("2")), cs("c2", alloc=_cpu("1"))],
            ),
            True,
            {"cpu": 3000},
            id="aggregate container request resolves max of sums instead of sum of maxes",
        ),
        pytest.param(
            mk(
                [c("c1", lim=_cpu("1")), c("c2", lim=_cpu("2"))],
                statuses=[cs("c1", lim=_cpu("2")), cs("c2", lim=_cpu("1"))],
            ),
            True,
            {},
            id="aggregate container limit resolves max of sums instead of sum of maxes",
        ),
        # TestPodRequestsAndLimitsVerticalScalingWrappers (requests side).
        pytest.param(
            mk([c("c1", lim=_cpu("10"))], statuses=[cs("c1", lim=_cpu("6"))], conditions=INFEASIBLE),
            True,
            {},
            id="container limits aggregation with infeasible resize",
        ),
    ],
)
def test_aggregate_container_requests(pod: Pod, use_status: bool, want: dict[str, int]) -> None:
    _check(pod, want, use_status=use_status)
