"""Port of upstream noderesources/balanced_allocation_test.go (TestNodeResourcesBalancedAllocation) at
v1.36.3, where the score compares the node's balance with and without the pod (#135573). The same cases
at v1.35.4 (score with the pod only) are in test_scoring_basics.py; both run against their release.

Skipped: the two DRA extended-resource cases (DeviceClass extendedResourceName through the DRA manager)
and TestBalancedAllocationSignPod (pod signatures are a Go-only batching mechanism).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.noderesources.balanced_allocation import (
    BalancedAllocation,
    balanced_improvement_score,
)
from kdiagnose.versions import dialect_for
from tests.upstream.basic_builders import resource_node
from tests.upstream.builders import new_plugin, new_snapshot
from tests.upstream.test_scoring_basics import (
    CPU_AND_MEMORY,
    CPU_ONLY,
    DEFAULT_SET,
    GPU8,
    GPU_SET,
    _pod,
)

Obj = dict[str, Any]
V136 = dialect_for("v1.36.3")
MEMORY_ONLY = [{"memory": "2000"}, {"memory": "3000"}]
CPU_AND_MEMORY_AND_GPU3 = [
    {"cpu": "1000m", "memory": "2000"},
    {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"},
]


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
            {"node1": 68, "node2": 75},
            id="nothing scheduled, resources requested, differently sized nodes",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [("node1", 10000, 20000, None), ("node2", 10000, 20000, None)],
            [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")],
            DEFAULT_SET,
            True,
            {"node1": 73, "node2": 74},
            id="resources requested, pods scheduled with resources",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [("node1", 10000, 20000, None), ("node2", 10000, 50000, None)],
            [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")],
            DEFAULT_SET,
            True,
            {"node1": 73, "node2": 70},
            id="resources requested, pods scheduled with resources, differently sized nodes",
        ),
        pytest.param(
            MEMORY_ONLY,
            [("node1", 3000, 5000, None), ("node2", 3000, 5000, None)],
            [(CPU_ONLY, "node1")],
            DEFAULT_SET,
            True,
            {"node1": 100, "node2": 50},
            id="resources requested, pods scheduled with resources, nodes to reach min/max score",
        ),
        pytest.param(
            CPU_ONLY,
            [("node1", 6000, 10000, None), ("node2", 6000, 10000, None)],
            [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")],
            DEFAULT_SET,
            True,
            {"node1": 62, "node2": 62},
            id="requested resources at node capacity",
        ),
        pytest.param(
            [{"cpu": "0", "memory": "0", "nvidia.com/gpu": "1"}],
            [("node1", 3500, 40000, GPU8), ("node2", 3500, 40000, GPU8)],
            [(CPU_AND_MEMORY_AND_GPU3, "node1"), (CPU_AND_MEMORY, "node2")],
            GPU_SET,
            True,
            {"node1": 75, "node2": 76},
            id="scalar resource is included in the score computation if pod requests the scalar resource",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [("node1", 3500, 40000, GPU8), ("node2", 3500, 40000, None)],
            [],
            GPU_SET,
            True,
            {"node1": 56, "node2": 56},
            id="scalar resource is not included in the score computation if pod doesn't request the scalar resource",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [("node1", 10000, 20000, None), ("node2", 10000, 20000, None)],
            [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")],
            DEFAULT_SET,
            False,
            {"node1": 73, "node2": 74},
            id="resources requested, pods scheduled with resources if PreScore not called",
        ),
    ],
)
def test_node_resources_balanced_allocation_v136(
    pod: list[Obj],
    nodes: list[tuple[str, int, int, dict[str, int] | None]],
    existing: list[tuple[list[Obj], str]],
    resources: list[Obj],
    run_pre_score: bool,
    expected: dict[str, int] | None,
) -> None:
    node_objs = [resource_node(n, cpu, mem, sc) for n, cpu, mem, sc in nodes]
    pods = [_pod(c, node=n, name=f"e{i}") for i, (c, n) in enumerate(existing)]
    snap = new_snapshot(pods, node_objs, dialect=V136)
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


@pytest.mark.parametrize(
    ("requested", "allocated", "allocatable", "want"),
    [
        # The comments of the upstream table: (with the pod, without) -> score.
        pytest.param([3000, 5000], [0, 0], [4000, 10000], 68, id="100 -> 87 gives 68"),
        pytest.param([3000, 5000], [3000, 0], [3000, 5000], 100, id="50 -> 100 gives 100"),
        pytest.param([0, 5000], [0, 0], [3000, 5000], 50, id="100 -> 50 gives 50"),
        pytest.param([6000, 5000], [3000, 5000], [6000, 10000], 62, id="100 -> 75 gives 62"),
    ],
)
def test_balanced_improvement_score(
    requested: list[int], allocated: list[int], allocatable: list[int], want: int
) -> None:
    assert balanced_improvement_score(requested, allocated, allocatable) == want
