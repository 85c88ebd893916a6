"""Port of upstream defaultpreemption/default_preemption_test.go (v1.34) through a real Framework:
TestPostFilter (the exact `preemption: ...` statuses), TestDryRunPreemption (victims per node, PDB violation
counts and Filter call counts with NodeResourcesFit / InterPodAffinity / PodTopologySpread in the profile),
TestSelectBestCandidate end to end (dry run + SelectCandidate) and TestPreempt (nominated node and victims).

Translation notes:
- st.MakeNode().Capacity(r) sets allocatable to r plus pods=32 (builders.NodeWrapper.capacity); pods come
  from basic_builders.make_pod(), which starts without containers as MakePod() does.
- epochTimeN is time.Unix(0, N) (nanoseconds); the ports use N seconds, which keeps the order (real
  startTimes are serialized at second precision anyway).
- TestDryRunPreemption seeds getOffsetRand with 4, so the dry runs start at offsets 4, 1, 3 for the
  cycles of a case; the port passes those offsets to dry_run_preemption directly (kdiagnose's own
  GetOffsetAndNumCandidates returns 0, see kdiagnose/scheduler/preemption.py).
Skipped: the scheduler-extender cases (extenders are not replayed), the PodGroup/TAS/workload-aware cases
(features newer than v1.35), TestCustomSelection/TestCustomOrdering (Go-only IsEligiblePod/MoreImportantPod
hooks), TestPreEnqueue (async preemption bookkeeping), and the API-call/async/event assertions of
TestPreempt (kdiagnose reports victims, it deletes nothing).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.snapshot import NodeInfo, Snapshot
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.framework import SUCCESS, Code, CycleState, Plugin, PreFilterResult, Status
from kdiagnose.scheduler.plugins.defaultpreemption.default_preemption import DefaultPreemption
from kdiagnose.scheduler.plugins.interpodaffinity.plugin import InterPodAffinity
from kdiagnose.scheduler.plugins.noderesources.fit import Fit
from kdiagnose.scheduler.plugins.podtopologyspread.plugin import PodTopologySpread
from kdiagnose.scheduler.preemption import Evaluator, pdbs_of
from kdiagnose.scheduler.runner import Framework
from tests.upstream import basic_builders as bb
from tests.upstream.builders import make_label_selector, make_node, new_plugin, new_snapshot
from tests.upstream.fakes import Inject, fake, framework_with

Obj = dict[str, Any]
U, UU, ERR = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
EPOCH = [f"1970-01-01T00:00:0{i}Z" for i in range(7)]
MAX_INT32 = 2**31 - 1
VIOLATING_KEY = "test.kubernetes.io/is-violating-pdb"


def pod(
    name: str,
    node: str = "",
    prio: int | None = None,
    req: dict[str, str] | None = None,
    start: str = "",
    labels: dict[str, str] | None = None,
    policy: str = "",
) -> bb.BasicPod:
    w = bb.make_pod().name(name)
    if node:
        w.node(node)
    if prio is not None:
        w.priority(prio)
    if req:
        w.req(req)
    if start:
        w.start_time(start)
    if labels:
        w.labels(labels)
    if policy:
        w.preemption_policy(policy)
    return w


def node(name: str, res: dict[str, str], labels: dict[str, str] | None = None) -> Node:
    w = make_node().name(name).capacity(res)
    for k, v in (labels or {}).items():
        w.label(k, v)
    return w.obj()


def topology_node(spec: str, res: dict[str, str] = VERY_LARGE) -> Node:
    """ "node-a/zone1" -> node "node-a" labelled hostname=node-a, zone=zone1 (the tests' labelKeys)."""
    parts = spec.split("/")
    return node(parts[0], res, dict(zip(["hostname", "zone", "region"], parts, strict=False)))


def pdb(selector: dict[str, str], allowed: int, name: str = "", disrupted: list[str] | None = None) -> Obj:
    status: Obj = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {p: "2025-01-01T00:00:00Z" for p in disrupted}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": dict(selector)}},
        "status": status,
    }


class TestPlugin(Plugin):
    """default_preemption_test.go TestPlugin: AddPod/RemovePod fail on nodes labelled error=true."""

    __test__ = False
    name = "test-plugin"

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return None, SUCCESS

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        if node_info.node.labels.get("error") == "true":
            return Status.error(f"failed to add pod: {pod.name}")
        return SUCCESS

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        if node_info.node.labels.get("error") == "true":
            return Status.error(f"failed to remove pod: {pod.name}")
        return SUCCESS


class MatchFilter(Plugin):
    """tf.MatchFilterPlugin: a node fits only a pod of the same name."""

    name = "MatchFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if pod.name == node_info.name:
            return SUCCESS
        return Status.unschedulable("Nodes failed the fake plugin")


def _diagnosis(p: Pod, snap: Snapshot, verdicts: dict[str, Code], absent: Code | None = UU) -> Diagnosis:
    d = Diagnosis(pod=p, num_all_nodes=snap.num_nodes)
    d.verdicts = {n: Status(c) for n, c in verdicts.items()}
    d.absent = Status(absent) if absent is not None else None
    return d


# ---------------------------------------------------------------- TestPostFilter

NODE1_U = {"node1": U}
BOTH_U = {"node1": U, "node2": U}

POST_FILTER = [
    pytest.param(
        pod("p", prio=HIGH),
        [pod("p1", "node1")],
        [],
        [node("node1", ONE_POD)],
        NODE1_U,
        "node1",
        SUCCESS,
        id="pod with higher priority can be made schedulable",
    ),
    pytest.param(
        pod("p"),
        [pod("p1", "node1")],
        [],
        [node("node1", ONE_POD)],
        NODE1_U,
        "",
        Status.unschedulable(
            "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
        ),
        id="pod with tied priority is still unschedulable",
    ),
    pytest.param(
        pod("p", prio=HIGH),
        [pod("p1", "node1")],
        [],
        [node("node1", ONE_POD)],
        {"node1": UU},
        "",
        Status.unschedulable(
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        ),
        id="preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        pod("p", prio=HIGH),
        [pod("p1", "node1")],
        [],
        [node("node1", ONE_POD)],
        {},
        "",
        Status.unschedulable(
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        ),
        id="preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
    ),
    pytest.param(
        pod("p", prio=MID),
        [pod("p1", "node1", HIGH), pod("p2", "node2", LOW)],
        [],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        BOTH_U,
        "node2",
        SUCCESS,
        id="pod can be made schedulable on one node",
    ),
    pytest.param(
        pod("p", prio=VERY_HIGH),
        [
            pod("p1", "node1", HIGH, labels={VIOLATING_KEY: "non-violating"}),
            pod("p2", "node1", LOW, labels={VIOLATING_KEY: "violating"}),
            pod("p3", "node2", MID, labels={VIOLATING_KEY: "violating"}),
        ],
        [
            pdb({VIOLATING_KEY: "violating"}, 0, "violating-pdb"),
            pdb({VIOLATING_KEY: "non-violating"}, MAX_INT32, "non-violating-pdb"),
        ],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        BOTH_U,
        "node2",
        SUCCESS,
        id="pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1"), pod("p2", "node2")],
        [],
        [node("node1", NODE_RES), node("node2", NODE_RES)],
        BOTH_U,
        "",
        Status.unschedulable("preemption: 0/2 nodes are available: 2 Insufficient cpu."),
        id="no candidate nodes found, no enough resource after removing low priority pods",
    ),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1", HIGH), pod("p2", "node2"), pod("p3", "node3", HIGH)],
        [],
        [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
        {"node1": U, "node2": U, "node3": U},
        "",
        Status.unschedulable(
            "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
            "2 No preemption victims found for incoming pod."
        ),
        id="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
    ),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1"), pod("p2", "node2")],
        [],
        [node(f"node{i}", NODE_RES) for i in range(1, 5)],
        {"node1": U, "node2": U, "node4": UU},
        "",
        Status.unschedulable(
            "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
            "2 Preemption is not helpful for scheduling."
        ),
        id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes "
        "don't have enough CPU resource",
    ),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1")],
        [],
        [node("node1", LARGE, {"error": "true"})],
        NODE1_U,
        "",
        Status.error(
            'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'
        ),
        id="only one node but failed with TestPlugin",
    ),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1"), pod("p2", "node2", req=MEDIUM)],
        [],
        [node("node1", LARGE, {"error": "true"}), node("node2", LARGE)],
        BOTH_U,
        "node2",
        SUCCESS,
        id="one failed with TestPlugin and the other pass",
    ),
]


@pytest.mark.parametrize(("preemptor", "pods", "pdbs", "nodes", "verdicts", "want_node", "want"), POST_FILTER)
def test_post_filter(
    preemptor: bb.BasicPod,
    pods: list[bb.BasicPod],
    pdbs: list[Obj],
    nodes: list[Node],
    verdicts: dict[str, Code],
    want_node: str,
    want: Status,
) -> None:
    p = preemptor.obj()
    snap = new_snapshot([w.obj() for w in pods], nodes, {"PodDisruptionBudget": pdbs})
    fit = new_plugin(Fit, snap)
    fw = framework_with(snap, pre_filter=[fit, new_plugin(TestPlugin, snap)], filter=[fit])
    state = CycleState()
    _, s, _ = fw.run_pre_filter(state, p)
    assert s.ok
    d = _diagnosis(p, snap, verdicts)
    pl = new_plugin(DefaultPreemption, snap)
    assert isinstance(pl, DefaultPreemption)
    got = pl.post_filter(state, p, d, fw)
    assert (got.code, got.message) == (want.code, want.message)
    assert (d.preemption.nominated_node if d.preemption else "") == want_node


# ---------------------------------------------------------------- TestDryRunPreemption


def _fit(snap: Snapshot) -> list[Plugin]:
    return [new_plugin(Fit, snap)]


def _fit_ipa(snap: Snapshot) -> list[Plugin]:
    return [new_plugin(Fit, snap), new_plugin(InterPodAffinity, snap)]


def _pts(snap: Snapshot) -> list[Plugin]:
    return [new_plugin(PodTopologySpread, snap)]


def _false(snap: Snapshot) -> list[Plugin]:
    return [fake("FalseFilter", snap, Inject(filter=U, filter_reason="Nodes failed the fake plugin"))]


def _true(snap: Snapshot) -> list[Plugin]:
    return [fake("TrueFilter", snap)]


def _match(snap: Snapshot) -> list[Plugin]:
    return [new_plugin(MatchFilter, snap)]


ARGS_40_1 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}
N2 = ["node1", "node2"]
N5 = [f"node{i}" for i in range(1, 6)]
APP_FOO = {"app": "foo"}
ANTI_FOO = make_label_selector().exists("foo").obj()


def _mid_large(i: int, labels: dict[str, str] | None = None, prio: int = MID) -> bb.BasicPod:
    return pod(f"p{i}", f"node{i}", prio, LARGE, labels=labels)


# (id, plugins, node names, preemptor(s), existing pods, pdbs, fake filter code, args, offsets,
#  expected candidates per cycle {node: ([victims], pdb violations)}, filter calls per cycle)
DRY_RUN: list[Any] = [
    pytest.param(
        _false,
        N2,
        [pod("p", prio=HIGH)],
        [pod("p1", "node1", MID), pod("p2", "node2", MID)],
        [],
        None,
        {},
        [0],
        [{}],
        [2],
        id="a pod that does not fit on any node",
    ),
    pytest.param(
        _true,
        N2,
        [pod("p", prio=HIGH)],
        [pod("p1", "node1", MID), pod("p2", "node2", MID)],
        [],
        U,
        {},
        [0],
        [{}],
        [2],
        id="a pod that fits with no preemption",
    ),
    pytest.param(
        _match,
        N2,
        [pod("node1", prio=HIGH)],
        [pod("p1", "node1", MID), pod("p2", "node2", MID)],
        [],
        U,
        {},
        [0],
        [{}],
        [2],
        id="a pod that fits on one node with no preemption",
    ),
    pytest.param(
        _fit,
        N2,
        [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)],
        [],
        None,
        {},
        [0],
        [{"node1": (["p1"], 0), "node2": (["p2"], 0)}],
        [4],
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        _fit,
        N2,
        [pod("p", prio=LOW, req=LARGE)],
        [pod("p1", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)],
        [],
        None,
        {},
        [0],
        [{}],
        [0],
        id="a pod that would fit on the nodes, but other pods running are higher priority, no preemption "
        "would happen",
    ),
    pytest.param(
        _fit,
        N2,
        [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1.1", "node1", LOW, SMALL), pod("p1.2", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)],
        [],
        None,
        {},
        [0],
        [{"node1": (["p1.2"], 0), "node2": (["p2"], 0)}],
        [5],
        id="medium priority pod is preempted, but lower priority one stays as it is small",
    ),
    pytest.param(
        _fit,
        N2,
        [pod("p", prio=HIGH, req=LARGE)],
        [
            pod("p1.1", "node1", MID, SMALL),
            pod("p1.2", "node1", LOW, SMALL),
            pod("p1.3", "node1", MID, MEDIUM),
            pod("p1.4", "node1", HIGH, SMALL),
            pod("p2", "node2", HIGH, LARGE),
        ],
        [],
        None,
        {},
        [0],
        [{"node1": (["p1.2", "p1.3"], 0)}],
        [4],
        id="mixed priority pods are preempted",
    ),
    pytest.param(
        _fit,
        N2,
        [pod("p", prio=HIGH, req=LARGE)],
        [
            pod("p1.1", "node1", LOW, SMALL, EPOCH[5]),
            pod("p1.2", "node1", LOW, SMALL, EPOCH[4]),
            pod("p1.3", "node1", MID, MEDIUM, EPOCH[3]),
            pod("p1.4", "node1", HIGH, SMALL, EPOCH[2]),
            pod("p2", "node2", HIGH, LARGE, EPOCH[1]),
        ],
        [],
        None,
        {},
        [0],
        [{"node1": (["p1.1", "p1.3"], 0)}],
        [4],
        id="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
    ),
    pytest.param(
        _fit_ipa,
        N2,
        [pod("p", prio=HIGH, req=SMALL, labels={"foo": ""})],
        [
            pod("p1.1", "node1", LOW, SMALL, labels={"foo": ""}).pod_anti_affinity("hostname", ANTI_FOO),
            pod("p1.2", "node1", MID, SMALL),
            pod("p1.3", "node1", HIGH, SMALL),
            pod("p2", "node2", HIGH, SMALL),
        ],
        [],
        None,
        {},
        [0],
        [{"node1": (["p1.1"], 0)}],
        [3],
        id="pod with anti-affinity is preempted",
    ),
    pytest.param(
        _pts,
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        [
            pod("p", prio=HIGH, labels={"foo": ""})
            .spread_constraint(1, "zone", "DoNotSchedule", ANTI_FOO)
            .spread_constraint(1, "hostname", "DoNotSchedule", ANTI_FOO)
        ],
        [
            pod("pod-a1", "node-a", MID, labels={"foo": ""}),
            pod("pod-a2", "node-a", LOW, labels={"foo": ""}),
            pod("pod-b1", "node-b", LOW, labels={"foo": ""}),
            pod("pod-x1", "node-x", HIGH, labels={"foo": ""}),
            pod("pod-x2", "node-x", HIGH, labels={"foo": ""}),
        ],
        [],
        None,
        {},
        [0],
        [{"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)}],
        [5],
        id="preemption to resolve pod topology spread filter failure",
    ),
    pytest.param(
        _fit,
        N2,
        [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)],
        [],
        U,
        {},
        [0],
        [{}],
        [2],
        id="get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
    ),
    pytest.param(
        _fit,
        ["node1"],
        [pod("p", prio=HIGH, req=VERY_LARGE)],
        [
            pod("p1.1", "node1", MID, MEDIUM, labels=APP_FOO),
            pod("p1.2", "node1", MID, MEDIUM, labels=APP_FOO),
        ],
        [pdb(APP_FOO, 1)],
        None,
        {},
        [0],
        [{"node1": (["p1.1", "p1.2"], 1)}],
        [3],
        id="preemption with violation of same pdb",
    ),
    pytest.param(
        _fit,
        ["node1"],
        [pod("p", prio=HIGH, req=VERY_LARGE)],
        [
            pod("p1.1", "node1", MID, MEDIUM, labels=APP_FOO),
            pod("p1.2", "node1", MID, MEDIUM, labels=APP_FOO),
        ],
        [pdb(APP_FOO, 1, disrupted=["p2"])],
        None,
        {},
        [0],
        [{"node1": (["p1.1", "p1.2"], 1)}],
        [3],
        id="preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't "
        "belong to DisruptedPods",
    ),
    pytest.param(
        _fit,
        ["node1"],
        [pod("p", prio=HIGH, req=VERY_LARGE)],
        [
            pod("p1.1", "node1", MID, MEDIUM, labels=APP_FOO),
            pod("p1.2", "node1", MID, MEDIUM, labels=APP_FOO),
        ],
        [pdb(APP_FOO, 1, disrupted=["p1.2"])],
        None,
        {},
        [0],
        [{"node1": (["p1.1", "p1.2"], 0)}],
        [3],
        id="preemption with violation of the pdb with pod whose eviction was processed, the victim belongs "
        "to DisruptedPods",
    ),
    pytest.param(
        _fit,
        ["node1"],
        [pod("p", prio=HIGH, req=VERY_LARGE)],
        [
            pod("p1.1", "node1", MID, MEDIUM, labels=APP_FOO),
            pod("p1.2", "node1", MID, MEDIUM, labels=APP_FOO),
            pod("p1.3", "node1", MID, MEDIUM, labels=APP_FOO),
        ],
        [pdb(APP_FOO, 1, disrupted=["p1.3"])],
        None,
        {},
        [0],
        [{"node1": (["p1.1", "p1.2", "p1.3"], 1)}],
        [4],
        id="preemption with violation of the pdb with pod whose eviction was processed, the victim which "
        "belongs to DisruptedPods is treated as 'nonViolating'",
    ),
    pytest.param(
        _fit,
        N5,
        [pod("p", prio=HIGH, req=LARGE)],
        [_mid_large(i) for i in range(1, 6)],
        [],
        None,
        ARGS_40_1,
        [4],
        [{"node1": (["p1"], 0), "node5": (["p5"], 0)}],
        [4],
        id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
    ),
    pytest.param(
        _fit,
        N5,
        [pod("p", prio=HIGH, req=LARGE)],
        [
            _mid_large(1),
            _mid_large(2, prio=VERY_HIGH),
            _mid_large(3),
            _mid_large(4),
            _mid_large(5, prio=VERY_HIGH),
        ],
        [],
        None,
        ARGS_40_1,
        [4],
        [{"node1": (["p1"], 0), "node3": (["p3"], 0)}],
        [4],
        id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
    ),
    pytest.param(
        _fit,
        N5,
        [pod(f"tp{i}", prio=HIGH, req=LARGE) for i in (1, 2, 3)],
        [_mid_large(i) for i in range(1, 6)],
        [],
        None,
        ARGS_40_1,
        [4, 1, 3],
        [
            {"node1": (["p1"], 0), "node5": (["p5"], 0)},
            {"node2": (["p2"], 0), "node3": (["p3"], 0)},
            {"node4": (["p4"], 0), "node5": (["p5"], 0)},
        ],
        [4, 4, 4],
        id="preemption offset across multiple scheduling cycles and wrap around",
    ),
    pytest.param(
        _fit,
        N5,
        [pod("p", prio=HIGH, req=LARGE)],
        [
            _mid_large(1, APP_FOO),
            _mid_large(2, APP_FOO),
            _mid_large(3),
            _mid_large(4),
            _mid_large(5, APP_FOO),
        ],
        [pdb(APP_FOO, 0)],
        None,
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
        [4],
        [{"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}],
        [8],
        id="preemption looks past numCandidates until a non-PDB violating node is found",
    ),
]


@pytest.mark.parametrize(
    (
        "plugins",
        "node_names",
        "preemptors",
        "init_pods",
        "pdbs",
        "fake_rc",
        "args",
        "offsets",
        "want",
        "calls",
    ),
    DRY_RUN,
)
def test_dry_run_preemption(
    plugins: Any,
    node_names: list[str],
    preemptors: list[bb.BasicPod],
    init_pods: list[bb.BasicPod],
    pdbs: list[Obj],
    fake_rc: Code | None,
    args: dict[str, int],
    offsets: list[int],
    want: list[dict[str, tuple[list[str], int]]],
    calls: list[int],
) -> None:
    nodes = [topology_node(n) for n in node_names]
    snap = new_snapshot([w.obj() for w in init_pods], nodes, {"PodDisruptionBudget": pdbs})
    inj = Inject(filter_by_node={n: fake_rc for n in node_names} if fake_rc is not None else {})
    fake_filter = fake("FakeFilter", snap, inj)
    extra: list[Plugin] = plugins(snap)
    fw = framework_with(snap, pre_filter=extra, filter=[fake_filter, *extra])
    pl = new_plugin(DefaultPreemption, snap, args)
    assert isinstance(pl, DefaultPreemption)
    node_infos = sorted(snap.node_infos, key=lambda ni: ni.name)
    for cycle, w in enumerate(preemptors):
        p = w.obj()
        state = CycleState()
        _, s, _ = fw.run_pre_filter(state, p)
        assert s.ok
        before = inj.calls.get("filter", 0)
        _, num = pl.get_offset_and_num_candidates(len(node_infos))
        got, _, _ = Evaluator(pl, fw).dry_run_preemption(
            state, p, node_infos, pdbs_of(snap), offsets[cycle], num
        )
        assert {c.name: (sorted(v.name for v in c.victims), c.num_pdb_violations) for c in got} == want[cycle]
        assert inj.calls.get("filter", 0) - before == calls[cycle]


# ---------------------------------------------------------------- TestSelectBestCandidate (end to end)

E0 = EPOCH[0]
SELECT_BEST: list[Any] = [
    pytest.param(
        N2,
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1", MID, LARGE, E0), pod("p2", "node2", MID, LARGE, E0)],
        {"node1", "node2"},
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", MID, MEDIUM, E0),
            pod("p1.2", "node1", MID, LARGE, E0),
            pod("p2.1", "node2", MID, MEDIUM, E0),
            pod("p2.2", "node2", LOW, MEDIUM, E0),
            pod("p3.1", "node3", LOW, MEDIUM, E0),
            pod("p3.2", "node3", LOW, MEDIUM, E0),
        ],
        {"node3"},
        id="node with min highest priority pod is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", MID, MEDIUM, E0),
            pod("p1.2", "node1", MID, LARGE, E0),
            pod("p2.1", "node2", MID, LARGE, E0),
            pod("p2.2", "node2", LOW, MEDIUM, E0),
            pod("p3.1", "node3", MID, MEDIUM, E0),
            pod("p3.2", "node3", MID, MEDIUM, E0),
        ],
        {"node2"},
        id="when highest priorities are the same, minimum sum of priorities is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", MID, SMALL, E0),
            pod("p1.2", "node1", NEG, SMALL, E0),
            pod("p1.3", "node1", MID, SMALL, E0),
            pod("p1.4", "node1", NEG, SMALL, E0),
            pod("p2.1", "node2", MID, LARGE, E0),
            pod("p2.2", "node2", NEG, MEDIUM, E0),
            pod("p3.1", "node3", MID, MEDIUM, E0),
            pod("p3.2", "node3", NEG, SMALL, E0),
            pod("p3.3", "node3", LOW, SMALL, E0),
        ],
        {"node2"},
        id="when highest priority and sum are the same, minimum number of pods is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", MID, SMALL, E0),
            pod("p1.2", "node1", NEG, SMALL, E0),
            pod("p1.3", "node1", NEG, SMALL, E0),
            pod("p2.1", "node2", MID, LARGE, E0),
            pod("p2.2", "node2", NEG, MEDIUM, E0),
            pod("p3.1", "node3", MID, MEDIUM, E0),
            pod("p3.2", "node3", NEG, SMALL, E0),
            pod("p3.3", "node3", LOW, SMALL, E0),
        ],
        {"node2"},
        id="sum of adjusted priorities is considered",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4"],
        pod("p", prio=VERY_HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", MID, SMALL, E0),
            pod("p1.2", "node1", LOW, SMALL, E0),
            pod("p1.3", "node1", LOW, SMALL, E0),
            pod("p2.1", "node2", HIGH, LARGE, E0),
            pod("p3.1", "node3", MID, MEDIUM, E0),
            pod("p3.2", "node3", LOW, SMALL, E0),
            pod("p3.3", "node3", LOW, SMALL, E0),
            pod("p3.4", "node3", LOW, MEDIUM, E0),
            pod("p4.1", "node4", MID, MEDIUM, E0),
            pod("p4.2", "node4", MID, SMALL, E0),
            pod("p4.3", "node4", MID, SMALL, E0),
            pod("p4.4", "node4", NEG, SMALL, E0),
        ],
        {"node1"},
        id="non-overlapping lowest high priority, sum priorities, and number of pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", MID, MEDIUM, EPOCH[2]),
            pod("p1.2", "node1", MID, MEDIUM, EPOCH[2]),
            pod("p2.1", "node2", MID, MEDIUM, EPOCH[3]),
            pod("p2.2", "node2", MID, MEDIUM, EPOCH[3]),
            pod("p3.1", "node3", MID, MEDIUM, EPOCH[1]),
            pod("p3.2", "node3", MID, MEDIUM, EPOCH[1]),
        ],
        {"node2"},
        id="same priority, same number of victims, different start time for each node's pod",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", MID, MEDIUM, EPOCH[4]),
            pod("p1.2", "node1", MID, MEDIUM, EPOCH[2]),
            pod("p2.1", "node2", MID, MEDIUM, EPOCH[5]),
            pod("p2.2", "node2", MID, MEDIUM, EPOCH[1]),
            pod("p3.1", "node3", MID, MEDIUM, EPOCH[3]),
            pod("p3.2", "node3", MID, MEDIUM, EPOCH[6]),
        ],
        {"node3"},
        id="same priority, same number of victims, different start time for all pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", LOW, MEDIUM, EPOCH[4]),
            pod("p1.2", "node1", MID, MEDIUM, EPOCH[2]),
            pod("p2.1", "node2", MID, MEDIUM, EPOCH[6]),
            pod("p2.2", "node2", LOW, MEDIUM, EPOCH[1]),
            pod("p3.1", "node3", LOW, MEDIUM, EPOCH[3]),
            pod("p3.2", "node3", MID, MEDIUM, EPOCH[5]),
        ],
        {"node2"},
        id="different priority, same number of victims, different start time for all pods",
    ),
]


@pytest.mark.parametrize(("node_names", "preemptor", "pods", "expected"), SELECT_BEST)
def test_select_best_candidate_end_to_end(
    node_names: list[str], preemptor: bb.BasicPod, pods: list[bb.BasicPod], expected: set[str]
) -> None:
    snap = new_snapshot([w.obj() for w in pods], [node(n, VERY_LARGE) for n in node_names])
    fit = new_plugin(Fit, snap)
    fw = framework_with(snap, pre_filter=[fit], filter=[fit])
    pl = new_plugin(DefaultPreemption, snap)
    assert isinstance(pl, DefaultPreemption)
    p = preemptor.obj()
    state = CycleState()
    fw.run_pre_filter(state, p)
    ev = Evaluator(pl, fw)
    offset, num = pl.get_offset_and_num_candidates(len(snap.node_infos))
    candidates, _, _ = ev.dry_run_preemption(state, p, snap.node_infos, [], offset, num)
    best = ev.select_candidate(candidates)
    assert best is not None and best.name in expected


# ---------------------------------------------------------------- TestPreempt

PREEMPT: list[Any] = [
    pytest.param(
        pod("p", prio=HIGH, req=VERY_LARGE, policy="PreemptLowerPriority"),
        [
            pod("p1.1", "node1", LOW, SMALL),
            pod("p1.2", "node1", LOW, SMALL),
            pod("p2.1", "node2", HIGH, LARGE),
            pod("p3.1", "node3", MID, MEDIUM),
        ],
        ["node1", "node2", "node3"],
        "fit",
        "node1",
        ["p1.1", "p1.2"],
        id="basic preemption logic",
    ),
    pytest.param(
        pod("p", prio=HIGH, labels={"foo": ""})
        .spread_constraint(1, "zone", "DoNotSchedule", ANTI_FOO)
        .spread_constraint(1, "hostname", "DoNotSchedule", ANTI_FOO),
        [
            pod("p-a1", "node-a", HIGH, labels={"foo": ""}),
            pod("p-a2", "node-a", HIGH, labels={"foo": ""}),
            pod("p-b1", "node-b", LOW, labels={"foo": ""}),
            pod("p-x1", "node-x", HIGH, labels={"foo": ""}),
            pod("p-x2", "node-x", HIGH, labels={"foo": ""}),
        ],
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        "pts",
        "node-b",
        ["p-b1"],
        id="preemption for topology spread constraints",
    ),
    pytest.param(
        pod("p", prio=HIGH, req=VERY_LARGE, policy="Never"),
        [
            pod("p1.1", "node1", LOW, SMALL),
            pod("p1.2", "node1", LOW, SMALL),
            pod("p2.1", "node2", HIGH, LARGE),
            pod("p3.1", "node3", MID, MEDIUM),
        ],
        ["node1", "node2", "node3"],
        "fit",
        "",
        [],
        id="no preempting in pod",
    ),
    pytest.param(
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", LOW, SMALL),
            pod("p1.2", "node1", LOW, SMALL),
            pod("p2.1", "node2", HIGH, LARGE),
            pod("p3.1", "node3", MID, MEDIUM),
        ],
        ["node1", "node2", "node3"],
        "fit",
        "node1",
        ["p1.1", "p1.2"],
        id="PreemptionPolicy is nil",
    ),
]


def _framework(snap: Snapshot, kind: str) -> Framework:
    pl: Plugin = new_plugin(Fit, snap) if kind == "fit" else new_plugin(PodTopologySpread, snap)
    return framework_with(snap, pre_filter=[pl], filter=[pl])


@pytest.mark.parametrize(("preemptor", "pods", "node_names", "plugin", "want_node", "want_victims"), PREEMPT)
def test_preempt(
    preemptor: bb.BasicPod,
    pods: list[bb.BasicPod],
    node_names: list[str],
    plugin: str,
    want_node: str,
    want_victims: list[str],
) -> None:
    snap = new_snapshot([w.obj() for w in pods], [topology_node(n) for n in node_names])
    fw = _framework(snap, plugin)
    pl = new_plugin(DefaultPreemption, snap)
    assert isinstance(pl, DefaultPreemption)
    p = preemptor.obj()
    state = CycleState()
    _, s, _ = fw.run_pre_filter(state, p)
    assert s.ok
    d = _diagnosis(p, snap, {ni.name: U for ni in snap.node_infos})
    status = Evaluator(pl, fw).preempt(state, p, d)
    assert status.ok or (status.rejected and status.code != ERR)
    got_node = d.preemption.nominated_node if d.preemption else ""
    got_victims = sorted(v.name for v in d.preemption.victims) if d.preemption else []
    assert (got_node, got_victims) == (want_node, want_victims)

    # "Call preempt again and make sure it doesn't preempt any more pods": every node now absent (UU).
    again = _diagnosis(p, snap, {})
    Evaluator(pl, fw).preempt(state, p, again)
    assert again.preemption is None
