"""Port of upstream defaultpreemption/default_preemption_test.go (v1.34): TestSelectBestCandidate
(pickOneNodeForPreemption's tie-breakers) and TestPodEligibleToPreemptOthers.

In TestSelectBestCandidate every node has capacity veryLargeRes and the preemptor requests veryLargeRes, so the
dry run evicts every lower-priority pod on a node; the cases are ported at the candidate level: each node's
victims are its pods, most important first. Priorities and start times are the Go file's
(negPriority=-100 ... veryHighPriority=10000; epochTime1 < ... < epochTime6). Skipped: TestPostFilter /
TestDryRunPreemption's end-to-end runs need the whole framework and are covered by the golden corpus;
the events/metrics/async-preemption and API-call tests are Go-only mechanics.
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import Handle, Status
from kdiagnose.scheduler.plugins.defaultpreemption.default_preemption import DefaultPreemption
from kdiagnose.scheduler.preemption import Candidate, pick_one_node_for_preemption, sort_by_importance
from tests.plugins.volume_factories import V134, snapshot

NEG, LOW, MID, HIGH = -100, 0, 100, 1000
EPOCH = ["1970-01-01T00:00:00Z", *[f"1970-01-01T00:00:0{i}Z" for i in range(1, 7)]]


def _pod(name: str, node: str, priority: int, start: str = EPOCH[0], **extra: Any) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}], "priority": priority}
    if node:
        spec["nodeName"] = node
    status: dict[str, Any] = {"startTime": start} if start else {}
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name}
    meta.update(extra.pop("meta", {}))
    spec.update(extra.pop("spec", {}))
    status.update(extra.pop("status", {}))
    return Pod({"metadata": meta, "spec": spec, "status": status})


def _candidates(pods: list[tuple[str, str, int, str]]) -> list[Candidate]:
    by_node: dict[str, list[Pod]] = {}
    for name, node, prio, start in pods:
        by_node.setdefault(node, []).append(_pod(name, node, prio, start))
    return [Candidate(n, sort_by_importance(v)) for n, v in by_node.items()]


E = EPOCH
SELECT_BEST = [
    pytest.param([("p1", "node1", MID, E[0])], {"node1"}, id="No node needs preemption"),
    pytest.param(
        [("p1", "node1", MID, E[0]), ("p2", "node2", MID, E[0])],
        {"node1", "node2"},
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        [
            ("p1.1", "node1", MID, E[0]),
            ("p1.2", "node1", MID, E[0]),
            ("p2.1", "node2", MID, E[0]),
            ("p2.2", "node2", LOW, E[0]),
            ("p3.1", "node3", LOW, E[0]),
            ("p3.2", "node3", LOW, E[0]),
        ],
        {"node3"},
        id="node with min highest priority pod is picked",
    ),
    pytest.param(
        [
            ("p1.1", "node1", MID, E[0]),
            ("p1.2", "node1", MID, E[0]),
            ("p2.1", "node2", MID, E[0]),
            ("p2.2", "node2", LOW, E[0]),
            ("p3.1", "node3", MID, E[0]),
            ("p3.2", "node3", MID, E[0]),
        ],
        {"node2"},
        id="when highest priorities are the same, minimum sum of priorities is picked",
    ),
    pytest.param(
        [
            ("p1.1", "node1", MID, E[0]),
            ("p1.2", "node1", NEG, E[0]),
            ("p1.3", "node1", MID, E[0]),
            ("p1.4", "node1", NEG, E[0]),
            ("p2.1", "node2", MID, E[0]),
            ("p2.2", "node2", NEG, E[0]),
            ("p3.1", "node3", MID, E[0]),
            ("p3.2", "node3", NEG, E[0]),
            ("p3.3", "node3", LOW, E[0]),
        ],
        {"node2"},
        id="when highest priority and sum are the same, minimum number of pods is picked",
    ),
    pytest.param(
        [
            ("p1.1", "node1", MID, E[0]),
            ("p1.2", "node1", NEG, E[0]),
            ("p1.3", "node1", NEG, E[0]),
            ("p2.1", "node2", MID, E[0]),
            ("p2.2", "node2", NEG, E[0]),
            ("p3.1", "node3", MID, E[0]),
            ("p3.2", "node3", NEG, E[0]),
            ("p3.3", "node3", LOW, E[0]),
        ],
        {"node2"},
        id="sum of adjusted priorities is considered",
    ),
    pytest.param(
        [
            ("p1.1", "node1", MID, E[0]),
            ("p1.2", "node1", LOW, E[0]),
            ("p1.3", "node1", LOW, E[0]),
            ("p2.1", "node2", HIGH, E[0]),
            ("p3.1", "node3", MID, E[0]),
            ("p3.2", "node3", LOW, E[0]),
            ("p3.3", "node3", LOW, E[0]),
            ("p3.4", "node3", LOW, E[0]),
            ("p4.1", "node4", MID, E[0]),
            ("p4.2", "node4", MID, E[0]),
            ("p4.3", "node4", MID, E[0]),
            ("p4.4", "node4", NEG, E[0]),
        ],
        {"node1"},
        id="non-overlapping lowest high priority, sum priorities, and number of pods",
    ),
    pytest.param(
        [
            ("p1.1", "node1", MID, E[2]),
            ("p1.2", "node1", MID, E[2]),
            ("p2.1", "node2", MID, E[3]),
            ("p2.2", "node2", MID, E[3]),
            ("p3.1", "node3", MID, E[1]),
            ("p3.2", "node3", MID, E[1]),
        ],
        {"node2"},
        id="same priority, same number of victims, different start time for each node's pod",
    ),
    pytest.param(
        [
            ("p1.1", "node1", MID, E[4]),
            ("p1.2", "node1", MID, E[2]),
            ("p2.1", "node2", MID, E[5]),
            ("p2.2", "node2", MID, E[1]),
            ("p3.1", "node3", MID, E[3]),
            ("p3.2", "node3", MID, E[6]),
        ],
        {"node3"},
        id="same priority, same number of victims, different start time for all pods",
    ),
    pytest.param(
        [
            ("p1.1", "node1", LOW, E[4]),
            ("p1.2", "node1", MID, E[2]),
            ("p2.1", "node2", MID, E[6]),
            ("p2.2", "node2", LOW, E[1]),
            ("p3.1", "node3", LOW, E[3]),
            ("p3.2", "node3", MID, E[5]),
        ],
        {"node2"},
        id="different priority, same number of victims, different start time for all pods",
    ),
]


@pytest.mark.parametrize(("pods", "expected"), SELECT_BEST)
def test_select_best_candidate(pods: list[tuple[str, str, int, str]], expected: set[str]) -> None:
    best = pick_one_node_for_preemption(_candidates(pods))
    assert best is not None
    assert best.name in expected


def test_fewer_pdb_violations_win_first() -> None:
    # pickOneNodeForPreemption's first score: minNumPDBViolatingScoreFunc.
    a = Candidate("node1", [_pod("a", "node1", LOW)], num_pdb_violations=1)
    b = Candidate("node2", [_pod("b", "node2", MID), _pod("c", "node2", MID)], num_pdb_violations=0)
    best = pick_one_node_for_preemption([a, b])
    assert best is not None and best.name == "node2"


_PREEMPTED: dict[str, Any] = {
    "meta": {"deletionTimestamp": "2025-01-01T00:00:00Z"},
    "status": {
        "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    },
}


@pytest.mark.parametrize(
    ("pod", "pods", "nodes", "nominated_status", "expected"),
    [
        pytest.param(
            _pod("p_with_nominated_node", "", HIGH, "", status={"nominatedNodeName": "node1"}),
            [_pod("p1", "node1", LOW, **_PREEMPTED)],
            ["node1"],
            Status.unresolvable("node(s) had untolerated taint"),
            True,
            id="Pod with nominated node",
        ),
        pytest.param(
            _pod("p_without_status", "", HIGH, "", status={"nominatedNodeName": "node1"}),
            [_pod("p1", "node1", LOW, **_PREEMPTED)],
            ["node1"],
            None,
            False,
            id="Pod with nominated node, but without nominated node status",
        ),
        pytest.param(
            _pod("p_without_nominated_node", "", HIGH, ""),
            [],
            [],
            None,
            True,
            id="Pod without nominated node",
        ),
        pytest.param(
            _pod("p_with_preempt_never_policy", "", HIGH, "", spec={"preemptionPolicy": "Never"}),
            [],
            [],
            None,
            False,
            id="Pod with 'PreemptNever' preemption policy",
        ),
        # podTerminatingByPreemption needs the DisruptionTarget condition set by the scheduler: a pod
        # merely being deleted does not block a new preemption.
        pytest.param(
            _pod("p_terminating_not_preempted", "", HIGH, "", status={"nominatedNodeName": "node1"}),
            [_pod("p1", "node1", LOW, meta={"deletionTimestamp": "2025-01-01T00:00:00Z"})],
            ["node1"],
            None,
            True,
            id="Pod with nominated node whose terminating pod was not preempted",
        ),
        pytest.param(
            _pod("p_higher_terminating", "", HIGH, "", status={"nominatedNodeName": "node1"}),
            [_pod("p1", "node1", HIGH + 1, **_PREEMPTED)],
            ["node1"],
            None,
            True,
            id="Pod with nominated node whose terminating pod has a higher priority",
        ),
    ],
)
def test_pod_eligible_to_preempt_others(
    pod: Pod, pods: list[Pod], nodes: list[str], nominated_status: Status | None, expected: bool
) -> None:
    snap = snapshot([Node({"metadata": {"name": n}, "status": {"allocatable": {}}}) for n in nodes], pods, [])
    pl = DefaultPreemption(Handle(snap, V134, {}))
    ok, msg = pl.pod_eligible_to_preempt_others(pod, nominated_status)
    assert ok is expected
    if pod.preemption_policy == "Never":
        assert msg == "not eligible due to preemptionPolicy=Never."
    elif not ok:
        assert msg == "not eligible due to a terminating pod on the nominated node."


@pytest.mark.parametrize(
    ("num_nodes", "args", "expected"),
    [
        pytest.param(10, {}, 10, id="fewer nodes than minCandidateNodesAbsolute: all"),
        pytest.param(1000, {}, 100, id="10 percent of 1000 is 100"),
        pytest.param(5000, {}, 500, id="10 percent of 5000 is 500"),
        pytest.param(
            1000, {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 10}, 500, id="args"
        ),
    ],
)
def test_calculate_num_candidates(num_nodes: int, args: dict[str, int], expected: int) -> None:
    # TestCalculateNumCandidates / getOffsetAndNumCandidates.
    snap = snapshot([], [], [])
    pl = DefaultPreemption(Handle(snap, V134, dict(args)))
    assert pl.calculate_num_candidates(num_nodes) == expected
