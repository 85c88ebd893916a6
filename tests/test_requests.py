"""Effective pod requests (semantics §6): containers summed, init containers maxed, sidecars, overhead,
pod-level resources and in-place resize per release."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Pod
from kdiagnose.model.requests import finish_pod
from kdiagnose.versions import dialect_for

MI = 1024 * 1024


def container(name: str, cpu: str | None = None, memory: str | None = None, **extra: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    c: dict[str, Any] = {
        "name": name,
        "image": "busybox",
        "resources": {"requests": requests} if requests else {},
    }
    c.update(extra)
    return c


def pod(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": spec,
        "status": status or {},
    }


@pytest.mark.parametrize(
    ("spec", "version", "want"),
    [
        pytest.param(
            {"containers": [container("a", "100m", "100Mi"), container("b", "200m")]},
            "v1.34.1",
            {"cpu": 300, "memory": 100 * MI},
            id="requests of regular containers are summed",
        ),
        pytest.param(
            {"containers": [container("a", "100m")], "initContainers": [container("init", "500m")]},
            "v1.34.1",
            {"cpu": 500},
            id="an init container larger than the containers sets the request",
        ),
        pytest.param(
            {"containers": [container("a", "1")], "initContainers": [container("init", "500m")]},
            "v1.34.1",
            {"cpu": 1000},
            id="an init container smaller than the containers does not matter",
        ),
        pytest.param(
            {
                "containers": [container("a", "300m")],
                "initContainers": [
                    container("init", "1"),
                    container("sidecar", "200m", restartPolicy="Always"),
                ],
            },
            "v1.34.1",
            {"cpu": 1000},
            id="a sidecar started after a regular init container does not add to that init step",
        ),
        pytest.param(
            {
                "containers": [container("a", "300m")],
                "initContainers": [
                    container("sidecar", "200m", restartPolicy="Always"),
                    container("init", "1"),
                ],
            },
            "v1.34.1",
            {"cpu": 1200},
            id="a regular init container after a sidecar runs beside it",
        ),
        pytest.param(
            {
                "containers": [container("a", "300m")],
                "initContainers": [container("sidecar", "200m", restartPolicy="Always")],
            },
            "v1.34.1",
            {"cpu": 500},
            id="a sidecar adds to the containers for the pod's whole life",
        ),
        pytest.param(
            {"containers": [container("a", "100m")], "overhead": {"cpu": "50m", "memory": "10Mi"}},
            "v1.34.1",
            {"cpu": 150, "memory": 10 * MI},
            id="RuntimeClass overhead is added",
        ),
        pytest.param(
            {"containers": [container("a", "100m", "64Mi")], "resources": {"requests": {"cpu": "2"}}},
            "v1.34.1",
            {"cpu": 2000, "memory": 64 * MI},
            id="pod-level requests replace the containers' sum from v1.34",
        ),
        pytest.param(
            {
                "containers": [container("a", "100m")],
                "resources": {"requests": {"cpu": "2"}},
                "overhead": {"cpu": "50m"},
            },
            "v1.34.1",
            {"cpu": 2050},
            id="overhead is added on top of pod-level requests",
        ),
        pytest.param(
            {"containers": [container("a", "100m")], "resources": {"requests": {"cpu": "2"}}},
            "v1.33.3",
            {"cpu": 100},
            id="pod-level requests are ignored before v1.34 (gate off)",
        ),
    ],
)
def test_pod_requests(spec: dict[str, Any], version: str, want: dict[str, int]) -> None:
    p = Pod(pod(spec))
    finish_pod(p, dialect_for(version))
    assert p.requests == want


def test_containers_without_requests_count_defaults_only_for_scoring() -> None:
    p = Pod(pod({"containers": [container("a"), container("b", "300m")]}))
    finish_pod(p, dialect_for("v1.34.1"))
    assert p.requests == {"cpu": 300}
    assert p.non_zero_cpu == 100 + 300
    assert p.non_zero_mem == 2 * 200 * MI


RESIZED_STATUS = {
    "phase": "Running",
    "containerStatuses": [
        {"name": "a", "allocatedResources": {"cpu": "500m"}, "resources": {"requests": {"cpu": "500m"}}}
    ],
}


@pytest.mark.parametrize(
    ("node_name", "version", "want_cpu"),
    [
        pytest.param("n1", "v1.33.3", 500, id="a running pod counts its allocated resize from v1.33"),
        pytest.param("n1", "v1.32.2", 100, id="a running pod counts only its spec before v1.33"),
        pytest.param("", "v1.33.3", 100, id="a pending pod counts only its spec"),
    ],
)
def test_in_place_resize(node_name: str, version: str, want_cpu: int) -> None:
    spec: dict[str, Any] = {"containers": [container("a", "100m")]}
    if node_name:
        spec["nodeName"] = node_name
    p = Pod(pod(spec, RESIZED_STATUS))
    finish_pod(p, dialect_for(version))
    assert p.requests["cpu"] == want_cpu
