"""DefaultPreemption PostFilter and the preemption Evaluator, with tiny fake filter plugins."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.requests import finish_pod
from kdiagnose.model.snapshot import NodeInfo, Snapshot
from kdiagnose.scheduler import names
from kdiagnose.scheduler import runner as runner_mod
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.framework import SUCCESS, Code, CycleState, Handle, Plugin, PreFilterResult, Status
from kdiagnose.scheduler.plugins.defaultpreemption.default_preemption import DefaultPreemption
from kdiagnose.scheduler.preemption import (
    PDB,
    Candidate,
    aggregate_errors,
    filter_pods_with_pdb_violation,
    pick_one_node_for_preemption,
    sort_by_importance,
)
from kdiagnose.scheduler.profiles import Profile
from kdiagnose.scheduler.registry import plugin_class
from kdiagnose.scheduler.runner import Framework
from kdiagnose.versions import dialect_for

DIALECT = dialect_for("v1.34.1")


# ---------------------------------------------------------------- fake plugins


class FakeBlocked(Plugin):
    """UU on nodes labelled blocked=true (like a taint: evicting pods cannot help)."""

    name = "FakeBlocked"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if node_info.node.labels.get("blocked") == "true":
            return Status.unresolvable("node(s) were blocked")
        return SUCCESS


class FakeFit(Plugin):
    """cpu only: U when the free cpu is short, UU when the node's whole allocatable is (as Fit in v1.34)."""

    name = "FakeFit"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        want = pod.requests.get("cpu", 0)
        alloc = node_info.allocatable.get("cpu", 0)
        if want > alloc:
            return Status.unresolvable("Insufficient cpu")
        if want + node_info.requested.get("cpu", 0) > alloc:
            return Status.unschedulable("Insufficient cpu")
        return SUCCESS


class _Counts:
    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def clone(self) -> _Counts:
        return _Counts(dict(self.counts))


class FakeConflict(Plugin):
    """PreFilter counts pods labelled conflict=true per node; Filter rejects (U) nodes that have any.

    Only the PreFilter extensions keep the count right once preemption removes pods, so this checks that
    the dry run calls them on a cloned state.
    """

    name = "FakeConflict"
    KEY = "FakeConflict/counts"

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        counts: dict[str, int] = {}
        for ni in self.snapshot.node_infos:
            counts[ni.name] = sum(1 for p in ni.pods if p.labels.get("conflict") == "true")
        state.write(self.KEY, _Counts(counts))
        return None, SUCCESS

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        if pod_to_add.labels.get("conflict") == "true":
            state.read(self.KEY).counts[node_info.name] += 1
        return SUCCESS

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        if pod_to_remove.labels.get("conflict") == "true":
            state.read(self.KEY).counts[node_info.name] -= 1
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if state.read(self.KEY).counts[node_info.name] > 0:
            return Status.unschedulable("node(s) had a conflicting pod")
        return SUCCESS


class FakePin(Plugin):
    """PreFilterResult limited to nodes labelled pinned=true (like matchFields metadata.name)."""

    name = "FakePin"

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        if pod.labels.get("pin") != "true":
            return None, SUCCESS
        keep = frozenset(ni.name for ni in self.snapshot.node_infos if ni.node.labels.get("pinned") == "true")
        return PreFilterResult(keep), SUCCESS


FAKES: dict[str, type[Plugin]] = {p.name: p for p in (FakeBlocked, FakeFit, FakeConflict, FakePin)}


@pytest.fixture(autouse=True)
def _fake_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    def lookup(name: str) -> type[Plugin] | None:
        return FAKES.get(name) or plugin_class(name)

    monkeypatch.setattr(runner_mod, "plugin_class", lookup)


def profile(args: dict[str, Any] | None = None) -> Profile:
    return Profile(
        pre_filter=["FakePin", "FakeConflict"],
        filter=["FakeBlocked", "FakeFit", "FakeConflict"],
        post_filter=[names.DEFAULT_PREEMPTION],
        plugin_args={names.DEFAULT_PREEMPTION: args or {}},
    )


# ---------------------------------------------------------------- object builders


def node(name: str, cpu: str = "4", **labels: str) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": cpu, "pods": "110"}},
    }


def pod(
    name: str,
    cpu: str = "1",
    *,
    on: str = "",
    prio: int = 0,
    start: str | None = "2025-06-01T10:00:00Z",
    ns: str = "default",
    labels: dict[str, str] | None = None,
    never: bool = False,
    nominated: str = "",
    preempted: bool = False,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "priority": prio,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
    }
    if on:
        spec["nodeName"] = on
    if never:
        spec["preemptionPolicy"] = "Never"
    status: dict[str, Any] = {"phase": "Running" if on else "Pending"}
    if on and start:
        status["startTime"] = start
    if nominated:
        status["nominatedNodeName"] = nominated
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"uid-{name}", "labels": labels or {}}
    if preempted:
        meta["deletionTimestamp"] = "2025-06-01T11:00:00Z"
        status["conditions"] = [
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
        ]
    return {"kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def pdb(
    name: str, allowed: int, match: dict[str, str], ns: str = "default", disrupted: tuple[str, ...] = ()
) -> dict[str, Any]:
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {p: "2025-06-01T10:00:00Z" for p in disrupted}
    return {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": match}},
        "status": status,
    }


def make_pod(obj: dict[str, Any]) -> Pod:
    p = Pod(obj)
    finish_pod(p, DIALECT)
    return p


def run(
    nodes: list[dict[str, Any]],
    bound: list[dict[str, Any]],
    pending: dict[str, Any],
    pdbs: list[dict[str, Any]] | None = None,
    args: dict[str, Any] | None = None,
) -> Diagnosis:
    preemptor = make_pod(pending)
    snap = Snapshot(
        DIALECT,
        [Node(n) for n in nodes],
        [make_pod(p) for p in bound] + [preemptor],
        {"PodDisruptionBudget": pdbs or []},
        present=["PodDisruptionBudget"],
    )
    return Framework(snap, profile(args)).schedule(preemptor)


def outcome(d: Diagnosis) -> tuple[str | None, list[str] | None, int | None]:
    if d.preemption is None:
        return (d.postfilter.message if d.postfilter else None), None, None
    return d.preemption.nominated_node, [v.name for v in d.preemption.victims], d.preemption.pdb_violations


# ---------------------------------------------------------------- end to end through the runner

CASES = [
    pytest.param(
        [node("n1")],
        [pod("a", "4", on="n1", prio=5)],
        pod("p", "1", prio=5),
        None,
        None,
        ("preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.", None, None),
        id="only equal-priority pods on the node: no victims",
    ),
    pytest.param(
        [node("n1"), node("n2")],
        [pod("a", "4", on="n1"), pod("b", "4", on="n2")],
        pod("p", "1", prio=100, never=True),
        None,
        None,
        ("preemption: not eligible due to preemptionPolicy=Never.", None, None),
        id="preemptionPolicy Never is not eligible",
    ),
    pytest.param(
        [node("n1", blocked="true"), node("n2", "1"), node("n3")],
        [pod("a", "4", on="n3", prio=10)],
        pod("p", "2", prio=5),
        None,
        None,
        (
            "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling.",
            None,
            None,
        ),
        id="unresolvable nodes (blocked, too small) are not helpful; only the U node is tried",
    ),
    pytest.param(
        [node("n1")],
        [pod("a", "1", on="n1", prio=0), pod("b", "3", on="n1", prio=10)],
        pod("p", "2", prio=5),
        None,
        None,
        ("preemption: 0/1 nodes are available: 1 Insufficient cpu.", None, None),
        id="still not fitting after removing every lower-priority pod gives the filter's reason",
    ),
    pytest.param(
        [node("n1"), node("n2")],
        [pod("a", "2", on="n1"), pod("b", "2", on="n1"), pod("c", "4", on="n2")],
        pod("p", "3", prio=5),
        None,
        None,
        ("n2", ["c"], 0),
        id="the node with fewest victims wins",
    ),
    pytest.param(
        [node("n1"), node("n2")],
        [
            pod("a", "1", on="n1"),
            pod("b", "1", on="n1"),
            pod("c", "2", on="n1"),
            pod("d", "4", on="n2", prio=1),
        ],
        pod("p", "2", prio=5),
        None,
        None,
        ("n1", ["c"], 0),
        id="lowest highest-priority victim wins over the node with a priority-1 victim",
    ),
    pytest.param(
        [node("n1"), node("n2")],
        [pod("a", "2", on="n1"), pod("b", "2", on="n1"), pod("c", "4", on="n2")],
        pod("p", "2", prio=5),
        None,
        None,
        ("n1", ["b"], 0),
        id="a full tie between nodes goes to the first; of equal victims the first listed is reprieved",
    ),
    pytest.param(
        [node("n1"), node("n2")],
        [
            pod("a", "4", on="n1", start="2025-06-01T10:00:00Z"),
            pod("b", "4", on="n2", start="2025-06-01T12:00:00Z"),
        ],
        pod("p", "2", prio=5),
        None,
        None,
        ("n2", ["b"], 0),
        id="single equal victims: the node whose victim started latest wins",
    ),
    pytest.param(
        [node("n1")],
        [
            pod("old", "2", on="n1", start="2025-06-01T09:00:00Z"),
            pod("new", "2", on="n1", start="2025-06-01T11:00:00Z"),
        ],
        pod("p", "2", prio=5),
        None,
        None,
        ("n1", ["new"], 0),
        id="equal priority victims: the earlier-started pod is reprieved first",
    ),
    pytest.param(
        [node("n1")],
        [pod("low", "2", on="n1", prio=1), pod("high", "2", on="n1", prio=3)],
        pod("p", "2", prio=5),
        None,
        None,
        ("n1", ["low"], 0),
        id="the higher-priority pod is reprieved first",
    ),
    pytest.param(
        [node("n1")],
        [pod("a", "4", on="n1", labels={"app": "db"})],
        pod("p", "2", prio=5),
        [pdb("db", 0, {"app": "db"})],
        None,
        ("n1", ["a"], 1),
        id="a PDB is violated when there is no other way",
    ),
    pytest.param(
        [node("n1"), node("n2")],
        [pod("a", "4", on="n1", labels={"app": "db"}), pod("b", "2", on="n2"), pod("c", "2", on="n2")],
        pod("p", "3", prio=5),
        [pdb("db", 0, {"app": "db"})],
        None,
        ("n2", ["b", "c"], 0),
        id="a node without PDB violations beats one with fewer victims",
    ),
    pytest.param(
        [node("n1")],
        [
            pod("guarded", "2", on="n1", labels={"app": "db"}, start="2025-06-01T11:00:00Z"),
            pod("free", "2", on="n1", start="2025-06-01T09:00:00Z"),
        ],
        pod("p", "2", prio=5),
        [pdb("db", 0, {"app": "db"})],
        None,
        ("n1", ["free"], 0),
        id="PDB-protected pods are reprieved before more important unprotected ones",
    ),
    pytest.param(
        [node("n1"), node("n2")],
        [pod("a", "2", on="n1"), pod("b", "2", on="n1"), pod("c", "4", on="n2")],
        pod("p", "3", prio=5),
        None,
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1},
        ("n1", ["a", "b"], 0),
        id="minCandidateNodesAbsolute 1 stops at the first candidate",
    ),
    pytest.param(
        [node("n1"), node("n2")],
        [pod("a", "4", on="n1", prio=10), pod("b", "2", on="n2"), pod("c", "2", on="n2")],
        pod("p", "3", prio=5),
        None,
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1},
        ("n2", ["b", "c"], 0),
        id="nodes without victims do not count towards minCandidateNodes",
    ),
    pytest.param(
        [node("n1"), node("n2", "8")],
        [
            pod("x", "1", on="n1", labels={"conflict": "true"}),
            pod("y", "1", on="n2", labels={"conflict": "true"}),
        ],
        pod("p", "1", prio=5),
        None,
        None,
        ("n1", ["x"], 0),
        id="PreFilter extensions follow removed pods on a cloned state (both nodes become candidates)",
    ),
    pytest.param(
        [node("n1", pinned="true"), node("n2"), node("n3")],
        [pod("a", "4", on="n1", prio=9)],
        pod("p", "1", prio=5, labels={"pin": "true"}),
        None,
        None,
        (
            "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling.",
            None,
            None,
        ),
        id="nodes outside the PreFilterResult are not candidates",
    ),
    pytest.param(
        [node("n1"), node("n2")],
        [pod("a", "4", on="n1", preempted=True), pod("b", "4", on="n2")],
        pod("p", "1", prio=5, nominated="n1"),
        None,
        None,
        ("preemption: not eligible due to a terminating pod on the nominated node.", None, None),
        id="a victim still terminating on the nominated node makes the pod wait",
    ),
    pytest.param(
        [node("n1", blocked="true"), node("n2")],
        [pod("a", "4", on="n1", preempted=True), pod("b", "4", on="n2")],
        pod("p", "1", prio=5, nominated="n1"),
        None,
        None,
        ("n2", ["b"], 0),
        id="an unresolvable nominated node does not block preempting again",
    ),
]


@pytest.mark.parametrize(("nodes", "bound", "pending", "pdbs", "args", "want"), CASES)
def test_preemption(
    nodes: list[dict[str, Any]],
    bound: list[dict[str, Any]],
    pending: dict[str, Any],
    pdbs: list[dict[str, Any]] | None,
    args: dict[str, Any] | None,
    want: tuple[str | None, list[str] | None, int | None],
) -> None:
    d = run(nodes, bound, pending, pdbs, args)
    assert outcome(d) == want
    assert not d.scheduled


def test_success_leaves_no_postfilter_text() -> None:
    d = run([node("n1")], [pod("a", "4", on="n1")], pod("p", "2", prio=5))
    assert d.postfilter is not None and d.postfilter.code == Code.SUCCESS
    assert d.message == "0/1 nodes are available: 1 Insufficient cpu."


def test_failure_message_tail() -> None:
    d = run([node("n1"), node("n2", blocked="true")], [pod("a", "4", on="n1", prio=7)], pod("p", "2", prio=5))
    assert d.message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were blocked. preemption: 0/2 nodes are available: "
        "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )


def test_dry_run_does_not_touch_the_snapshot() -> None:
    a = pod("a", "4", on="n1")
    preemptor = make_pod(pod("p", "2", prio=5))
    bound = make_pod(a)
    snap = Snapshot(DIALECT, [Node(node("n1"))], [bound, preemptor])
    d = Framework(snap, profile()).schedule(preemptor)
    assert d.preemption is not None
    assert snap.node_info_by_name["n1"].pods == [bound]
    assert snap.node_info_by_name["n1"].requested["cpu"] == 4000


# ---------------------------------------------------------------- units


def _pod(
    name: str, prio: int = 0, start: str = "", labels: dict[str, str] | None = None, ns: str = "default"
) -> Pod:
    return Pod(
        {
            "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": {"priority": prio},
            "status": {"startTime": start},
        }
    )


def _pdb(obj: dict[str, Any]) -> PDB:
    return PDB.from_obj(obj)


@pytest.mark.parametrize(
    ("pdbs", "want_violating"),
    [
        pytest.param(
            [pdb("x", 1, {"app": "a"})], ["p2"], id="one allowed disruption: the second matching pod violates"
        ),
        pytest.param([pdb("x", 2, {"app": "a"})], [], id="two allowed disruptions: nobody violates"),
        pytest.param(
            [pdb("x", 0, {"app": "a"}, ns="other")], [], id="a PDB in another namespace does not match"
        ),
        pytest.param(
            [pdb("x", 0, {"app": "a"}, disrupted=("p1",))],
            ["p2"],
            id="pods in disruptedPods do not use budget",
        ),
        pytest.param([pdb("x", 0, {})], [], id="an empty selector matches nothing"),
        pytest.param(
            [pdb("x", 5, {"app": "a"}), pdb("y", 0, {"tier": "web"})],
            ["p1"],
            id="any matching PDB going negative makes a violation",
        ),
    ],
)
def test_filter_pods_with_pdb_violation(pdbs: list[dict[str, Any]], want_violating: list[str]) -> None:
    pods = [_pod("p1", labels={"app": "a", "tier": "web"}), _pod("p2", labels={"app": "a"}), _pod("p3")]
    violating, non_violating = filter_pods_with_pdb_violation(pods, [_pdb(o) for o in pdbs])
    assert [p.name for p in violating] == want_violating
    assert [p.name for p in non_violating] == [p.name for p in pods if p.name not in want_violating]


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
            {"app": "b"},
            True,
            id="In",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
            {"x": "1"},
            True,
            id="NotIn without the key",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
            {"x": "1"},
            False,
            id="Exists without the key",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "In", "values": []}]},
            {"app": "a"},
            False,
            id="invalid In without values",
        ),
        pytest.param(
            {"matchLabels": {"app": "a"}, "matchExpressions": [{"key": "t", "operator": "DoesNotExist"}]},
            {"app": "a"},
            True,
            id="labels and expressions",
        ),
    ],
)
def test_pdb_selector(selector: dict[str, Any], labels: dict[str, str], matches: bool) -> None:
    p = _pdb(
        {
            "metadata": {"name": "x", "namespace": "default"},
            "spec": {"selector": selector},
            "status": {"disruptionsAllowed": 0},
        }
    )
    violating, _ = filter_pods_with_pdb_violation([_pod("p", labels=labels)], [p])
    assert bool(violating) is matches


def test_sort_by_importance() -> None:
    pods = [
        _pod("late", 1, "2025-06-01T12:00:00Z"),
        _pod("nostart", 1),
        _pod("early", 1, "2025-06-01T08:00:00Z"),
        _pod("high", 9, "2025-06-01T13:00:00Z"),
    ]
    assert [p.name for p in sort_by_importance(pods)] == ["high", "early", "late", "nostart"]


def _cand(name: str, *victims: Pod, pdb: int = 0) -> Candidate:
    return Candidate(name, list(victims), pdb)


@pytest.mark.parametrize(
    ("cands", "want"),
    [
        pytest.param(
            [_cand("a", _pod("x"), pdb=1), _cand("b", _pod("y"), _pod("z"))],
            "b",
            id="fewest PDB violations first",
        ),
        pytest.param(
            [_cand("a", _pod("x", 3)), _cand("b", _pod("y", 1), _pod("z", 1))],
            "b",
            id="lowest highest priority",
        ),
        pytest.param(
            [_cand("a", _pod("x", 1), _pod("y", -5)), _cand("b", _pod("z", 1), _pod("w", -9))],
            "b",
            id="smallest priority sum",
        ),
        pytest.param([_cand("a", _pod("x"), _pod("y")), _cand("b", _pod("z"))], "b", id="fewest victims"),
        pytest.param(
            [
                _cand("a", _pod("x", 0, "2025-06-01T08:00:00Z")),
                _cand("b", _pod("y", 0, "2025-06-01T09:00:00Z")),
            ],
            "b",
            id="latest start of the top victims",
        ),
        pytest.param([_cand("a", _pod("x")), _cand("b", _pod("y"))], "a", id="full tie: the first"),
    ],
)
def test_pick_one_node_for_preemption(cands: list[Candidate], want: str) -> None:
    best = pick_one_node_for_preemption(cands)
    assert best is not None and best.name == want


def test_num_candidates_from_args() -> None:
    snap = Snapshot(DIALECT, [], [])
    default = DefaultPreemption(Handle(snap, DIALECT, {}))
    assert [default.calculate_num_candidates(n) for n in (5, 100, 1000, 5000)] == [5, 100, 100, 500]
    custom = DefaultPreemption(
        Handle(snap, DIALECT, {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 2})
    )
    assert [custom.calculate_num_candidates(n) for n in (1, 3, 10)] == [1, 2, 5]


def test_aggregate_errors() -> None:
    assert aggregate_errors(["a"]) == "a"
    assert aggregate_errors(["a", "a"]) == "a"
    assert aggregate_errors(["a", "b", "a"]) == "[a, b]"
