"""Ported from pkg/scheduler/schedule_one_test.go (v1.34) TestSchedulerSchedulePod / TestFindFitAllError /
TestFindFitSomeError, with the fake plugins of pkg/scheduler/testing/framework, through the whole cycle
(`Framework.schedule`). The upstream cases compare FitError.Diagnosis; here the expected FailedScheduling
text is what FitError.Error() prints for that Diagnosis.

Also: `no nodes available to schedule pods`, evaluateNominatedNode (schedule_one.go findNodesThatFitPod), and
truncateMessage. Skipped: extender cases (extenders are not simulated), EvaluatedNodes counters,
VolumeBinding / PodTopologySpread cases (those plugins have their own ported tests).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Pod
from kdiagnose.model.requests import finish_pod
from kdiagnose.scheduler.framework import Code
from kdiagnose.scheduler.runner import Framework
from kdiagnose.versions import dialect_for
from tests.upstream.builders import V134, make_node, make_pod, new_snapshot
from tests.upstream.fakes import ERR_REASON_FAKE, Inject, fake, framework_with

U, UU, ERR, SKIP = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR, Code.SKIP
V131 = dialect_for("v1.31.8")


def _build(spec: dict[str, Any], nodes: list[str], dialect: Any = V134) -> Framework:
    """spec: {"pre_filter": [(name, Inject)], "filter": [...], "score": [(name, Inject, weight)]}."""
    snap = new_snapshot([], [make_node().name(n).obj() for n in nodes], dialect=dialect)
    pre = [fake(n, snap, i) for n, i in spec.get("pre_filter", [])]
    flt = [fake(n, snap, i) for n, i in spec.get("filter", [])]
    scr = [(fake(n, snap, i), w) for n, i, w in spec.get("score", [])]
    # A plugin registered at several points (RegisterPluginAsExtensions) is one instance.
    both = {p.name: p for p in pre}
    flt = [both.get(p.name, p) for p in flt]
    return framework_with(snap, pre_filter=pre, filter=flt, pre_score=[p for p, _ in scr], score=scr)


def _fails(reason: str, **codes: Code) -> Inject:
    return Inject(filter_by_node=dict(codes), filter_reason=reason)


def _pod(name: str, nominated: str = "") -> Pod:
    raw = make_pod().name(name).raw()
    if nominated:
        raw["status"]["nominatedNodeName"] = nominated
    p = Pod(raw)
    finish_pod(p, V134)
    return p


INJ = "injecting failure for pod {}"

CASES = [
    pytest.param(
        {"filter": [("FalseFilter", Inject(filter=U, filter_reason=ERR_REASON_FAKE))]},
        ["node1", "node2"],
        "2",
        None,
        f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.",
        id="test 1",
    ),
    pytest.param(
        {"filter": [("TrueFilter", Inject())], "score": [("EqualPrioritizerPlugin", Inject(), 1)]},
        ["node1", "node2"],
        "ignore",
        {"node1", "node2"},
        None,
        id="test 2",
    ),
    pytest.param(
        {"filter": [("MatchFilter", _fails(ERR_REASON_FAKE, node1=U))]},
        ["node1", "node2"],
        "node2",
        {"node2"},
        None,
        id="test 3 (fits on the node named like the pod)",
    ),
    pytest.param(
        {
            "filter": [
                ("TrueFilter", Inject()),
                ("FalseFilter", Inject(filter=U, filter_reason=ERR_REASON_FAKE)),
            ],
            "score": [("NumericMap", Inject(score={"3": 3, "2": 2, "1": 1}), 1)],
        },
        ["3", "2", "1"],
        "2",
        None,
        f"0/3 nodes are available: 3 {ERR_REASON_FAKE}.",
        id="test 7",
    ),
    pytest.param(
        {
            "filter": [
                ("NoPodsFilter", _fails(ERR_REASON_FAKE, **{"2": U})),
                ("MatchFilter", _fails(ERR_REASON_FAKE, **{"1": U})),
            ]
        },
        ["1", "2"],
        "2",
        None,
        f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.",
        id="test 8",
    ),
    pytest.param(
        {
            "filter": [("TrueFilter", Inject())],
            "score": [("NumericMap", Inject(score={"3": 3, "2": 2, "1": 1}), 1)],
        },
        ["3", "2", "1"],
        "ignore",
        {"3"},
        None,
        id="test 4 (highest score wins)",
    ),
    pytest.param(
        {
            "filter": [("TrueFilter", Inject())],
            "score": [
                ("NumericMap", Inject(score={"3": 3, "2": 2, "1": 1}), 1),
                ("ReverseNumericMap", Inject(score={"3": 3, "2": 2, "1": 1}, normalize="reverse"), 2),
            ],
        },
        ["3", "2", "1"],
        "2",
        {"1"},
        None,
        id="test 6 (weights: reverse map with weight 2 wins)",
    ),
    pytest.param(
        {"filter": [("FakeFilter", _fails(INJ.format("test-filter"), **{"3": U}))]},
        ["3"],
        "test-filter",
        None,
        "0/1 nodes are available: 1 injecting failure for pod test-filter.",
        id="test with filter plugin returning Unschedulable status",
    ),
    pytest.param(
        {"filter": [("FakeFilter", _fails(INJ.format("test-filter"), **{"3": UU}))]},
        ["3"],
        "test-filter",
        None,
        "0/1 nodes are available: 1 injecting failure for pod test-filter.",
        id="test with filter plugin returning UnschedulableAndUnresolvable status",
    ),
    pytest.param(
        {"filter": [("FakeFilter", _fails(INJ.format("test-filter"), **{"1": U}))]},
        ["1", "2"],
        "test-filter",
        {"2"},
        None,
        id="test with partial failed filter plugin",
    ),
    pytest.param(
        {"pre_filter": [("FakePreFilter", Inject(pre_filter=UU))]},
        ["1", "2"],
        "test-prefilter",
        None,
        "0/2 nodes are available: injected status.",
        id="test prefilter plugin returning Unschedulable status",
    ),
    pytest.param(
        {"pre_filter": [("FakePreFilter", Inject(pre_filter=ERR))]},
        ["1", "2"],
        "test-prefilter",
        None,
        'running PreFilter plugin "FakePreFilter": injected status',
        id="test prefilter plugin returning error status",
    ),
    pytest.param(
        {
            "pre_filter": [
                ("FakePreFilter1", Inject()),
                ("FakePreFilter2", Inject(pre_filter_result=frozenset({"node2"}))),
                ("FakePreFilter3", Inject(pre_filter_result=frozenset({"node1", "node2"}))),
            ]
        },
        ["node1", "node2", "node3"],
        "test-prefilter",
        {"node2"},
        None,
        id="test prefilter plugin returning node",
    ),
    pytest.param(
        {
            "pre_filter": [
                ("FakePreFilter1", Inject()),
                ("FakePreFilter2", Inject(pre_filter_result=frozenset({"node2"}))),
                ("FakePreFilter3", Inject(pre_filter_result=frozenset({"node1"}))),
            ]
        },
        ["node1", "node2", "node3"],
        "test-prefilter",
        None,
        "0/3 nodes are available: node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously.",
        id="test prefilter plugin returning non-intersecting nodes",
    ),
    pytest.param(
        {
            "pre_filter": [
                ("Zeta", Inject(pre_filter_result=frozenset({"node2"}))),
                ("Alpha", Inject(pre_filter_result=frozenset({"node1"}))),
            ]
        },
        ["node1", "node2"],
        "p",
        None,
        "0/2 nodes are available: node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously.",
        id="non-intersecting nodes name the plugins sorted (sets.List), not in run order",
    ),
    pytest.param(
        {
            "pre_filter": [
                ("FakePreFilter1", Inject()),
                ("FakePreFilter2", Inject(pre_filter_result=frozenset())),
            ]
        },
        ["node1"],
        "test-prefilter",
        None,
        "0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2.",
        id="test prefilter plugin returning empty node set",
    ),
    pytest.param(
        {
            "pre_filter": [("FakePreFilter", Inject(pre_filter_result=frozenset({"node2"})))],
            "filter": [("FakeFilter", _fails(INJ.format("test-prefilter"), node2=U))],
        },
        ["node1", "node2"],
        "test-prefilter",
        None,
        "0/2 nodes are available: 1 injecting failure for pod test-prefilter, "
        "1 node(s) didn't satisfy plugin(s) [FakePreFilter].",
        id="test some nodes are filtered out by prefilter plugin and other are filtered out by filter plugin",
    ),
    pytest.param(
        {
            "pre_filter": [("FakePreFilter1", Inject()), ("FakeFilter2", Inject(pre_filter=SKIP))],
            "filter": [
                ("FakeFilter1", _fails(ERR_REASON_FAKE, node1=U)),
                ("FakeFilter2", Inject(filter=ERR)),
            ],
            "score": [("EqualPrioritizerPlugin", Inject(), 1)],
        },
        ["node1", "node2", "node3"],
        "test-prefilter",
        {"node2", "node3"},
        None,
        id="test prefilter plugin returning skip",
    ),
    pytest.param(
        {"filter": [("TrueFilter", Inject())]},
        ["node1", "node2", "node3"],
        "pod1",
        {"node1", "node2", "node3"},
        None,
        id="test without score plugin no extra nodes are evaluated",
    ),
    pytest.param(
        {"pre_filter": [("FakePreFilter", Inject(pre_filter_result=frozenset({"node1", "node2"})))]},
        ["node1", "node2", "node3"],
        "test-prefilter",
        {"node1", "node2"},
        None,
        id="test no score plugin, prefilter plugin returning 2 nodes",
    ),
    pytest.param(
        {
            "pre_filter": [("FakePreFilter", Inject(pre_filter_result=frozenset({"invalid-node"})))],
            "filter": [("TrueFilter", Inject())],
        },
        ["1", "2"],
        "test-prefilter",
        None,
        "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter].",
        id="test prefilter plugin returned an invalid node",
    ),
    pytest.param(
        {
            "filter": [
                ("TrueFilter", Inject()),
                ("MatchFilter", _fails(ERR_REASON_FAKE, **{"3": U, "2": U, "1": U})),
            ]
        },
        ["3", "2", "1"],
        "",
        None,
        f"0/3 nodes are available: 3 {ERR_REASON_FAKE}.",
        id="TestFindFitAllError",
    ),
    pytest.param(
        {"filter": [("TrueFilter", Inject()), ("MatchFilter", _fails(ERR_REASON_FAKE, **{"3": U, "2": U}))]},
        ["3", "2", "1"],
        "1",
        {"1"},
        None,
        id="TestFindFitSomeError",
    ),
]


@pytest.mark.parametrize(("spec", "nodes", "pod", "want_nodes", "want_msg"), CASES)
def test_scheduler_schedule_pod(
    spec: dict[str, Any], nodes: list[str], pod: str, want_nodes: set[str] | None, want_msg: str | None
) -> None:
    d = _build(spec, nodes).schedule(_pod(pod))
    if want_nodes is not None:
        assert d.chosen in want_nodes
        assert d.message is None
    else:
        assert d.chosen is None
        assert d.message == want_msg


def test_absent_nodes_are_not_counted_before_v1_32() -> None:
    # v1.31 FitError.Error() ranges over NodeToStatusMap only: nodes outside the PreFilterResult vanish.
    spec = {
        "pre_filter": [("FakePreFilter", Inject(pre_filter_result=frozenset({"node2"})))],
        "filter": [("FakeFilter", _fails(INJ.format("p"), node2=U))],
    }
    d = _build(spec, ["node1", "node2"], V131).schedule(_pod("p"))
    assert d.message == "0/2 nodes are available: 1 injecting failure for pod p."


def test_no_nodes_available() -> None:
    # schedulePod: ErrNoNodesAvailable before any PreFilter.
    d = _build({"filter": [("TrueFilter", Inject())]}, []).schedule(_pod("p"))
    assert d.message == "no nodes available to schedule pods"


# ---------------------------------------------------------------- evaluateNominatedNode (schedule_one.go)


def test_nominated_node_that_passes_is_taken_without_scoring() -> None:
    spec = {
        "filter": [("TrueFilter", Inject())],
        "score": [("NumericMap", Inject(score={"n1": 100, "n2": 0}), 1)],
    }
    d = _build(spec, ["n1", "n2"]).schedule(_pod("p", nominated="n2"))
    assert d.chosen == "n2"
    assert d.nominated_node_used


def test_nominated_node_outside_the_prefilter_result_keeps_its_filter_status() -> None:
    # evaluateNominatedNode writes the failed nominated node into the shared NodeToStatus, so it is an
    # explicit entry (its own reason) and only the other node is "absent". The rejecting plugin also goes
    # into diagnosis.UnschedulablePlugins, the set the absent nodes' status names (findNodesThatFitPod), so
    # the real scheduler writes [FakeFilter NodeAffinityLike] (fixtures/fuzz-found/v13x-nominated-node-...).
    spec = {
        "pre_filter": [("NodeAffinityLike", Inject(pre_filter_result=frozenset({"n1"})))],
        "filter": [("FakeFilter", _fails(INJ.format("p"), n1=U, n3=U))],
    }
    d = _build(spec, ["n1", "n2", "n3"]).schedule(_pod("p", nominated="n3"))
    assert d.message == (
        "0/3 nodes are available: 1 node(s) didn't satisfy plugin(s) [FakeFilter NodeAffinityLike], "
        "2 injecting failure for pod p."
    )


def test_nominated_node_missing_from_the_snapshot_is_ignored() -> None:
    spec = {"filter": [("FakeFilter", _fails(INJ.format("p"), n1=U))]}
    d = _build(spec, ["n1", "n2"]).schedule(_pod("p", nominated="gone"))
    assert d.chosen == "n2"


# ---------------------------------------------------------------- truncateMessage


def test_event_message_is_truncated_at_1024_bytes() -> None:
    # 40 nodes each failing with its own long reason: the FitError text is far above NoteLengthLimit.
    names = [f"n{i:02d}" for i in range(40)]
    reasons = {n: f"node {n} " + "x" * 40 for n in names}
    snap_nodes = names
    fw = _build({"filter": [("F", Inject(filter=U))]}, snap_nodes)
    pl = fw.filter_plugins[0]

    def filt(state: Any, pod: Any, ni: Any) -> Any:
        from kdiagnose.scheduler.framework import Status

        return Status.unschedulable(reasons[ni.name])

    pl.filter = filt  # type: ignore[method-assign,assignment]
    d = fw.schedule(_pod("p"))
    full = "0/40 nodes are available: " + ", ".join(f"1 {reasons[n]}" for n in names) + "."
    assert d.full_message == full
    assert d.message == full[:1020] + " ..."
    assert len(d.message.encode()) == 1024
