"""Port of upstream noderesources/balanced_allocation_test.go (TestNodeResourcesBalancedAllocation) and
imagelocality/image_locality_test.go (TestImageLocalityPriority, TestNormalizedImageName).

Skipped: the two DRA extended-resource cases of BalancedAllocation (DRAExtendedResource is alpha and off in
every replayed release).
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import MAX_NODE_SCORE, Code, CycleState
from kdiagnose.scheduler.plugins.imagelocality.image_locality import ImageLocality, normalized_image_name
from kdiagnose.scheduler.plugins.noderesources.balanced_allocation import BalancedAllocation
from tests.upstream.basic_builders import make_node, make_pod, resource_node
from tests.upstream.builders import new_plugin, new_snapshot

Obj = dict[str, Any]
MB = 1024 * 1024

CPU_AND_MEMORY = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]
CPU_ONLY = [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}]
CPU_AND_MEMORY_AND_GPU = [
    {"cpu": "1000m", "memory": "2000"},
    {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"},
]
DEFAULT_SET = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
GPU_SET = [*DEFAULT_SET, {"name": "nvidia.com/gpu", "weight": 1}]
GPU8 = {"nvidia.com/gpu": 8}


def _pod(containers: list[Obj], node: str = "", name: str = "p") -> Pod:
    w = make_pod().name(name)
    for c in containers:
        w.req(c)
    if node:
        w.node(node)
    return w.obj()


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "run_pre_score", "expected"),
    [
        pytest.param(
            [],
            [("node1", 4000, 10000, None), ("node2", 4000, 10000, None)],
            [],
            DEFAULT_SET,
            True,
            None,
            id="nothing scheduled, nothing requested, skip in PreScore",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [("node1", 4000, 10000, None), ("node2", 6000, 10000, None)],
            [],
            DEFAULT_SET,
            True,
            {"node1": 87, "node2": MAX_NODE_SCORE},
            id="nothing scheduled, resources requested, differently sized nodes",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [("node1", 10000, 20000, None), ("node2", 10000, 20000, None)],
            [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")],
            DEFAULT_SET,
            True,
            {"node1": 82, "node2": 95},
            id="resources requested, pods scheduled with resources",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [("node1", 10000, 20000, None), ("node2", 10000, 50000, None)],
            [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")],
            DEFAULT_SET,
            True,
            {"node1": 82, "node2": 80},
            id="resources requested, pods scheduled with resources, differently sized nodes",
        ),
        pytest.param(
            CPU_ONLY,
            [("node1", 6000, 10000, None), ("node2", 6000, 10000, None)],
            [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")],
            DEFAULT_SET,
            True,
            {"node1": 50, "node2": 75},
            id="requested resources at node capacity",
        ),
        pytest.param(
            [{"memory": "0", "nvidia.com/gpu": "1"}],
            [("node1", 3500, 40000, GPU8), ("node2", 3500, 40000, GPU8)],
            [(CPU_AND_MEMORY, "node2"), (CPU_AND_MEMORY_AND_GPU, "node1")],
            GPU_SET,
            True,
            {"node1": 70, "node2": 65},
            id="include scalar resource on a node for balanced resource allocation",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [("node1", 3500, 40000, GPU8), ("node2", 3500, 40000, None)],
            [],
            GPU_SET,
            True,
            {"node1": 63, "node2": 63},
            id="node without the scalar resource should skip the scalar resource",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [("node1", 10000, 20000, None), ("node2", 10000, 20000, None)],
            [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")],
            DEFAULT_SET,
            False,
            {"node1": 82, "node2": 95},
            id="resources requested, pods scheduled with resources if PreScore not called",
        ),
    ],
)
def test_node_resources_balanced_allocation(
    pod: list[Obj],
    nodes: list[tuple[str, int, int, dict[str, int] | None]],
    existing: list[tuple[list[Obj], str]],
    resources: list[Obj],
    run_pre_score: bool,
    expected: dict[str, int] | None,
) -> None:
    node_objs = [resource_node(n, cpu, mem, sc) for n, cpu, mem, sc in nodes]
    pods = [_pod(c, node=n, name=f"e{i}") for i, (c, n) in enumerate(existing)]
    snap = new_snapshot(pods, node_objs)
    pl = new_plugin(BalancedAllocation, snap, {"resources": resources})
    incoming = _pod(pod)
    state = CycleState()
    if run_pre_score:
        st = pl.pre_score(state, incoming, snap.node_infos)
        if expected is None:
            assert st.code == Code.SKIP
            return
        assert st.ok
    got = {}
    for ni in snap.node_infos:
        s, st = pl.score(state, incoming, ni)
        assert st.ok
        got[ni.name] = s
    assert got == expected


def _image_node(name: str, images: list[tuple[list[str], int]]) -> Node:
    return make_node().name(name).images(images).obj()


NODE_40_300_2000 = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
    (["gcr.io/2000:latest"], 2000 * MB),
]
NODE_250_10 = [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
NODE_600_40_900 = [
    (["gcr.io/600:latest"], 600 * MB),
    (["gcr.io/40:latest"], 40 * MB),
    (["gcr.io/900:latest"], 900 * MB),
]
NODE_300_600_900 = [
    (["gcr.io/300:latest"], 300 * MB),
    (["gcr.io/600:latest"], 600 * MB),
    (["gcr.io/900:latest"], 900 * MB),
]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB)]
NODE_20_30_40 = [
    (["gcr.io/20:latest"], 20 * MB),
    (["gcr.io/30:latest"], 30 * MB),
    (["gcr.io/40:latest"], 40 * MB),
]


@pytest.mark.parametrize(
    ("images", "nodes", "expected"),
    [
        pytest.param(
            ["gcr.io/40", "gcr.io/250"],
            [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
            {"node1": 0, "node2": 5},
            id="two images spread on two nodes, prefer the larger image one",
        ),
        pytest.param(
            ["gcr.io/40", "gcr.io/300"],
            [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
            {"node1": 7, "node2": 0},
            id="two images on one node, prefer this node",
        ),
        pytest.param(
            ["gcr.io/10", "gcr.io/4000"],
            [("node1", NODE_4000_30), ("node2", NODE_250_10)],
            {"node1": MAX_NODE_SCORE, "node2": 0},
            id="if exceed limit, use limit",
        ),
        pytest.param(
            ["gcr.io/10", "gcr.io/4000"],
            [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", [])],
            {"node1": 66, "node2": 0, "node3": 0},
            id="if exceed limit, use limit (with node which has no images present)",
        ),
        pytest.param(
            ["gcr.io/300", "gcr.io/600", "gcr.io/900"],
            [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", [])],
            {"node1": 32, "node2": 36, "node3": 0},
            id="pod with multiple large images, node2 is preferred",
        ),
        pytest.param(
            ["gcr.io/30", "gcr.io/40"],
            [("node1", NODE_20_30_40), ("node2", NODE_4000_30)],
            {"node1": 1, "node2": 0},
            id="pod with multiple small images",
        ),
    ],
)
def test_image_locality_priority(
    images: list[str], nodes: list[tuple[str, list[tuple[list[str], int]]]], expected: dict[str, int]
) -> None:
    snap = new_snapshot(None, [_image_node(n, imgs) for n, imgs in nodes])
    pl = new_plugin(ImageLocality, snap)
    w = make_pod().name("p")
    for image in images:
        w.container(image)
    pod = w.obj()
    got = {}
    for ni in snap.node_infos:
        s, st = pl.score(CycleState(), pod, ni)
        assert st.ok
        got[ni.name] = s
    assert got == expected


DIGEST = "sha256:" + hashlib.sha256(b"root").hexdigest()


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param("root@" + DIGEST, "root@" + DIGEST, id="keep it as is 2"),
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want
