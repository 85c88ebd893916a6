"""Extended resources, hugepages and ephemeral-storage in NodeResourcesFit, with ignoredResourceGroups, the
init/sidecar maximum and RuntimeClass overhead, and what preemption makes of them per version.

Derived from noderesources/fit.go fitsRequest (v1.33.3 and v1.34.1): a resource the node does not advertise
has allocatable 0, so any request is `Insufficient <name>` (UU from v1.34, since it exceeds allocatable);
`ignoredResources`/`ignoredResourceGroups` skip only extended resource names (hugepages-* is not one).
component-helpers resource.PodRequests: max(sum of containers + sidecars, max over init containers of
init + sidecars started before it), then + overhead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scenarios.helpers import diagnose_all, node, pod, scenario

FOO = "example.com/foo"


def _sidecar_pod() -> dict[str, Any]:
    def c(name: str, foo: str, **kw: Any) -> dict[str, Any]:
        return {"name": name, "image": "x", "resources": {"requests": {FOO: foo}, "limits": {FOO: foo}}, **kw}

    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "s", "namespace": "default"},
        "spec": {
            # max(1 + 1, 3 + 1) = 4 foo
            "initContainers": [c("side", "1", restartPolicy="Always"), c("init", "3")],
            "containers": [c("main", "1")],
        },
    }


OBJS = [
    node("n1", extra={FOO: "2", "hugepages-2Mi": "1Gi"}),
    node("n2"),
    node("n3", cpu="1", extra={FOO: "8"}),
    pod("used", node_name="n1", cpu="100m", extra_requests={FOO: "1"}),
    pod("p", cpu="500m", extra_requests={FOO: "2", "hugepages-2Mi": "512Mi"}),
    pod("q", cpu="2", priority=10, extra_requests={FOO: "2"}),
    _sidecar_pod(),
    pod("e", extra_requests={"ephemeral-storage": "200Gi"}),
]


def _config(args: str) -> str:
    return (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: default-scheduler\n"
        "  pluginConfig:\n"
        "  - name: NodeResourcesFit\n"
        "    args:\n"
        f"      {args}\n"
    )


HIST_P = "0/3 nodes are available: 2 Insufficient example.com/foo, 2 Insufficient hugepages-2Mi."


@pytest.mark.parametrize(
    ("version", "config", "want"),
    [
        pytest.param(
            "v1.33.3",
            None,
            {
                "p": (
                    HIST_P
                    + " preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
                    [],
                ),
                # q outranks `used` on n1: evicting it frees one foo; success prints no PostFilter part.
                "q": ("0/3 nodes are available: 1 Insufficient cpu, 2 Insufficient example.com/foo.", []),
                "s": (None, ["n3"]),
                "e": (
                    "0/3 nodes are available: 3 Insufficient ephemeral-storage. preemption: 0/3 nodes are "
                    "available: 3 No preemption victims found for incoming pod.",
                    [],
                ),
            },
            id="v1.33: unadvertised resources are U, every node a candidate",
        ),
        pytest.param(
            "v1.34.1",
            None,
            {
                "p": (
                    HIST_P + " no new claims to deallocate, preemption: 0/3 nodes are available: "
                    "1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
                    [],
                ),
                "q": ("0/3 nodes are available: 1 Insufficient cpu, 2 Insufficient example.com/foo.", []),
                "s": (None, ["n3"]),
                "e": (
                    "0/3 nodes are available: 3 Insufficient ephemeral-storage. no new claims to deallocate, "
                    "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
                    [],
                ),
            },
            id="v1.34: requests above allocatable (0 when not advertised) are UU",
        ),
        pytest.param(
            "v1.34.1",
            _config('ignoredResourceGroups: ["example.com"]'),
            {"p": (None, ["n1"]), "q": (None, ["n1", "n2"]), "s": (None, ["n1", "n2", "n3"])},
            id="ignoredResourceGroups drops example.com/*, hugepages still checked",
        ),
    ],
)
def test_fit_reasons(
    tmp_path: Path, version: str, config: str | None, want: dict[str, tuple[str | None, list[str] | None]]
) -> None:
    r = diagnose_all(tmp_path, scenario(*OBJS), version, config)
    for name, (message, feasible) in want.items():
        d = r[f"default/{name}"]
        assert d.message == message, name
        if feasible is not None:
            assert sorted(d.feasible) == feasible, name


def test_ignored_resources_cannot_name_hugepages(tmp_path: Path) -> None:
    """ignoredResources applies only to extended resource names: hugepages-2Mi is still checked."""
    r = diagnose_all(tmp_path, scenario(*OBJS), "v1.34.1", _config('ignoredResources: ["hugepages-2Mi"]'))
    message = r["default/p"].message
    assert message is not None and message.startswith(HIST_P + " ")


def test_runtime_class_overhead_counts(tmp_path: Path) -> None:
    rc = {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "kata"},
        "handler": "kata",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
    }
    text = scenario(
        node("n1", cpu="1"),
        rc,
        pod("over", cpu="800m", runtimeClassName="kata"),
        pod("exact", cpu="750m", runtimeClassName="kata"),
    )
    r = diagnose_all(tmp_path, text)
    assert r["default/over"].message == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert r["default/exact"].scheduled
