"""Port of upstream pkg/scheduler/framework/preemption/preemption_test.go and the NodesForStatusCode table of
pkg/scheduler/framework/types_test.go (v1.34): which statuses make a node a preemption candidate, and
DryRunPreemption with a fake preemption.Interface (FakePostFilterPlugin: the first pod of a node is its
victim, with a fixed PDB-violation count).

Skipped: the stored TestNodesWherePreemptionMightHelp predates v1.31 (it treats nodes missing from the
status map as candidates, which no supported release does); its v1.34 successor is TestNodesForStatusCode.
Only the `code: Unschedulable` cases apply to preemption (findCandidates asks for that code).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kdiagnose.model.objects import Pod
from kdiagnose.model.snapshot import NodeInfo
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.framework import SUCCESS, Code, CycleState, Status
from kdiagnose.scheduler.preemption import PDB, Evaluator
from kdiagnose.scheduler.runner import Framework
from tests.upstream import basic_builders as bb
from tests.upstream.builders import make_node, new_snapshot
from tests.upstream.fakes import framework_with

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NODES = ["node1", "node2", "node3", "node4"]
MID, HIGH = 100, 1000
VERY_LARGE = {"cpu": "500m", "memory": "500"}


class FakePostFilterPlugin:
    """preemption_test.go FakePostFilterPlugin."""

    def __init__(self, num_violating: int) -> None:
        self.num_violating = num_violating

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        return True, ""

    def select_victims_on_node(
        self, framework: Framework, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PDB]
    ) -> tuple[list[Pod], int, Status]:
        return [node_info.pods[0]], self.num_violating, SUCCESS


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        pytest.param(
            {"node1": UU, "node2": UU, "node3": UU, "node4": UU}, set(), id="No node should be attempted"
        ),
        pytest.param(
            {},
            set(),
            id="No node should be attempted, as all are implicitly not matching the code",
        ),
        pytest.param(
            {"node1": U, "node2": UU, "node3": U},
            {"node1", "node3"},
            id="UnschedulableAndUnresolvable status should be skipped but Unschedulable should be tried",
        ),
    ],
)
def test_nodes_for_status_code(statuses: dict[str, Code], expected: set[str]) -> None:
    snap = new_snapshot([], [make_node().name(n).obj() for n in NODES])
    fw = framework_with(snap)
    pod = bb.make_pod().name("p").obj()
    d = Diagnosis(pod=pod, num_all_nodes=len(NODES))
    d.verdicts = {n: Status(c) for n, c in statuses.items()}
    d.absent = Status(UU)  # NewNodeToStatus(..., NewStatus(UnschedulableAndUnresolvable)) / default
    got = Evaluator(FakePostFilterPlugin(0), fw).nodes_for_status_code(d, U)
    assert {ni.name for ni in got} == expected


@pytest.mark.parametrize(
    ("num_violating", "expected"),
    [
        pytest.param(0, {"node1": (["p1"], 0), "node2": (["p2"], 0)}, id="no pdb violation"),
        pytest.param(1, {"node1": (["p1"], 1), "node2": (["p2"], 1)}, id="pdb violation on each node"),
    ],
)
def test_dry_run_preemption_fake_interface(
    num_violating: int, expected: dict[str, tuple[list[str], int]]
) -> None:
    nodes = [make_node().name(n).capacity(VERY_LARGE).obj() for n in ("node1", "node2")]
    init = [bb.make_pod().name("p1").node("node1").priority(MID).obj()]
    init.append(bb.make_pod().name("p2").node("node2").priority(MID).obj())
    snap = new_snapshot(init, nodes)
    fw = framework_with(snap)
    pod = bb.make_pod().name("p").priority(HIGH).obj()
    ev = Evaluator(FakePostFilterPlugin(num_violating), fw)
    got, _, _ = ev.dry_run_preemption(CycleState(), pod, snap.node_infos, [], 0, len(snap.node_infos))
    assert {c.name: (sorted(v.name for v in c.victims), c.num_pdb_violations) for c in got} == expected
