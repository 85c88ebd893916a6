"""Port of kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go
(TestPreScoreSkip, TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore).

Not ported: "matchLabelKeys ignored when feature gate disabled" (the gate is on in v1.31-v1.35) and the benchmark.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.podtopologyspread.plugin import PodTopologySpread
from kdiagnose.scheduler.plugins.podtopologyspread.scoring import PRE_SCORE_STATE_KEY, PreScoreState
from tests.upstream.builders import (
    PodWrapper,
    make_label_selector,
    make_node,
    make_pod,
    new_plugin,
    new_snapshot,
)

SA = "ScheduleAnyway"
DNS = "DoNotSchedule"
HONOR = "Honor"
IGNORE = "Ignore"
HOST = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
FOO = make_label_selector().exists("foo").obj()
BAR = make_label_selector().exists("bar").obj()
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
LIST = {"defaultingType": "List"}


def w(size: int) -> float:
    """topologyNormalizingWeight as upstream defines it: log(size + 2)."""
    return math.log(size + 2)


def node(name: str, **labels: str) -> Node:
    n = make_node().name(name)
    for k, v in labels.items():
        n.label(k, v)
    return n.obj()


def hn(name: str, zone: str | None = None, taints: bool = False, **labels: str) -> Node:
    """st.MakeNode().Name(name)[.Label("zone", zone)].Label(v1.LabelHostname, name)[.Label(k, v)...]."""
    n = make_node().name(name)
    if zone is not None:
        n.label("zone", zone)
    n.label(HOST, name)
    for k, v in labels.items():
        n.label(k, v)
    if taints:
        n.taints(TAINTS)
    return n.obj()


def kn(name: str, taints: bool = False, **labels: str) -> Node:
    """st.MakeNode().Name(name).Label("node", name)[.Label(k, v)...][.Taints(taints)]."""
    n = make_node().name(name).label("node", name)
    for k, v in labels.items():
        n.label(k, v)
    if taints:
        n.taints(TAINTS)
    return n.obj()


def ep(name: str, on: str, *keys: str, ns: str | None = None) -> Pod:
    p = make_pod().name(name).node(on)
    if ns:
        p.namespace(ns)
    for k in keys:
        p.label(k, "")
    return p.obj()


def incoming(*keys: str, **labels: str) -> PodWrapper:
    p = make_pod().name("p")
    for k in keys:
        p.label(k, "")
    for k, v in labels.items():
        p.label(k, v)
    return p


def rs(name: str, selector: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"selector": selector}}


def C(key: str, skew: int = 1, na: str = HONOR, nt: str = IGNORE) -> tuple[Any, ...]:
    return (skew, key, 1, na, nt)


# ------------------------------------------------------------------------------------------------ TestPreScoreSkip


@pytest.mark.parametrize(
    ("pod", "nodes", "objs", "args"),
    [
        pytest.param(
            make_pod().name("p").obj(),
            [node("node-a", **{HOST: "node-a"}), node("node-b", **{HOST: "node-b"})],
            None,
            LIST,
            id="the pod doesn't have soft topology spread Constraints",
        ),
        pytest.param(
            incoming(foo="bar", baz="sup").owner_reference("rs2", "ReplicaSet", "apps/v1").obj(),
            [node("node-a", planet="mars")],
            {"ReplicaSet": [rs("rs1", make_label_selector().exists("tar").obj())]},
            {
                "defaultingType": "List",
                "defaultConstraints": [{"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}],
            },
            id="default constraints and a replicaset that doesn't match",
        ),
    ],
)
def test_pre_score_skip(
    pod: Pod, nodes: list[Node], objs: dict[str, list[dict[str, Any]]] | None, args: dict[str, Any]
) -> None:
    pl = new_plugin(PodTopologySpread, new_snapshot([], nodes, objs), args)
    assert pl.pre_score(CycleState(), pod, list(pl.snapshot.node_infos)).code == Code.SKIP


# ------------------------------------------------------------------------------------- TestPreScoreStateEmptyNodes

EMPTY_NODES_CASES = [
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, FOO).spread_constraint(1, HOST, SA, FOO).obj(),
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2")],
        None,
        LIST,
        ([C("zone"), C(HOST)], set(), [{"zone1": 0, "zone2": 0}, {}], [w(2), w(3)]),
        id="normal case",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, None).obj(),
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2")],
        None,
        LIST,
        ([C("zone")], set(), [{"zone1": 0, "zone2": 0}], [w(2)]),
        id="null selector",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, FOO).spread_constraint(1, HOST, SA, BAR).obj(),
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x")],
        None,
        LIST,
        ([C("zone"), C(HOST)], {"node-x"}, [{"zone1": 0}, {}], [w(1), w(2)]),
        id="node-x doesn't have label zone",
    ),
    pytest.param(
        incoming(foo="tar", baz="sup").owner_reference("rs1", "ReplicaSet", "apps/v1").obj(),
        [
            node("node-a", **{HOST: "node-a", ZONE_LABEL: "mars"}),
            node("node-b", **{HOST: "node-b", ZONE_LABEL: "mars"}),
            # Nodes with no zone are not excluded. They are considered a separate zone.
            node("node-c", **{HOST: "node-c"}),
            node("node-d", **{HOST: "node-d"}),
        ],
        {"ReplicaSet": [rs("rs1", FOO)]},
        {"defaultingType": "System"},
        ([C(HOST, 3), C(ZONE_LABEL, 5)], set(), [{}, {"mars": 0, "": 0}], [w(4), w(2)]),
        id="system default constraints and a replicaset",
    ),
    pytest.param(
        incoming(foo="tar", baz="sup").owner_reference("rs1", "ReplicaSet", "apps/v1").obj(),
        [node("node-a", rack="rack1", planet="mars", **{HOST: "node-a"})],
        {"ReplicaSet": [rs("rs1", FOO)]},
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA},
                {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
                {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA},
            ],
        },
        ([C(HOST), C("planet", 2)], set(), [{}, {"mars": 0}], [w(1), w(1)]),
        id="default constraints and a replicaset",
    ),
    pytest.param(
        incoming(foo="bar", baz="sup")
        .owner_reference("rs1", "ReplicaSet", "apps/v1")
        .spread_constraint(1, "zone", DNS, BAR)
        .spread_constraint(2, "planet", SA, make_label_selector().label("baz", "sup").obj())
        .obj(),
        [node("node-a", planet="mars", galaxy="andromeda")],
        {"ReplicaSet": [rs("rs1", FOO)]},
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SA}],
        },
        ([C("planet", 2)], set(), [{"mars": 0}], [w(1)]),
        id="default constraints and a replicaset, but pod has constraints",
    ),
    pytest.param(
        incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", SA, BAR).obj(),
        [hn("node-a", "zone1", foo=""), hn("node-b", "zone1", foo=""), hn("node-x", "zone2")],
        None,
        LIST,
        ([C("zone")], set(), [{"zone1": 0, "zone2": 0}], [w(2)]),
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", SA, BAR, None, IGNORE).obj(),
        [hn("node-a", "zone1", foo=""), hn("node-b", "zone1", foo=""), hn("node-x", "zone2")],
        None,
        LIST,
        ([C("zone", na=IGNORE)], set(), [{"zone1": 0, "zone2": 0}], [w(2)]),
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "zone", SA, BAR).obj(),
        [hn("node-a", "zone1", foo=""), hn("node-b", "zone1", foo=""), hn("node-x", "zone2")],
        None,
        LIST,
        ([C("zone")], set(), [{"zone1": 0, "zone2": 0}], [w(2)]),
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        incoming("foo")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "zone", SA, BAR, None, IGNORE)
        .obj(),
        [hn("node-a", "zone1", foo=""), hn("node-b", "zone1", foo=""), hn("node-x", "zone2")],
        None,
        LIST,
        ([C("zone", na=IGNORE)], set(), [{"zone1": 0, "zone2": 0}], [w(2)]),
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, BAR, None, None, HONOR).obj(),
        [hn("node-a", "zone1", foo=""), hn("node-b", "zone1", foo=""), hn("node-x", "zone2", taints=True)],
        None,
        LIST,
        ([C("zone", nt=HONOR)], set(), [{"zone1": 0, "zone2": 0}], [w(2)]),
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, BAR).obj(),
        [hn("node-a", "zone1", foo=""), hn("node-b", "zone1", foo=""), hn("node-x", "zone2", taints=True)],
        None,
        LIST,
        ([C("zone")], set(), [{"zone1": 0, "zone2": 0}], [w(2)]),
        id="NodeTaintsPolicy ignored",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "objs", "args", "want"), EMPTY_NODES_CASES)
def test_pre_score_state_empty_nodes(
    pod: Pod,
    nodes: list[Node],
    objs: dict[str, list[dict[str, Any]]] | None,
    args: dict[str, Any],
    want: Any,
) -> None:
    pl = new_plugin(PodTopologySpread, new_snapshot([], nodes, objs), args)
    state = CycleState()
    assert pl.pre_score(state, pod, list(pl.snapshot.node_infos)).code == Code.SUCCESS
    s = state.read(PRE_SCORE_STATE_KEY)
    assert isinstance(s, PreScoreState)
    want_constraints, want_ignored, want_counts, want_weights = want
    got = [
        (c.max_skew, c.topology_key, c.min_domains, c.node_affinity_policy, c.node_taints_policy)
        for c in s.constraints
    ]
    assert got == want_constraints
    assert s.ignored == want_ignored
    assert s.topology_counts == want_counts
    assert s.weights == pytest.approx(want_weights)


# ------------------------------------------------------------------------------------- TestPodTopologySpreadScore


def foo_pods(spec: str) -> list[Pod]:
    """'a2 b1 d3' -> p-a1 p-a2 on node-a, p-b1 on node-b, p-d1..p-d3 on node-d, all labelled foo."""
    out = []
    for part in spec.split():
        letter, n = part[0], int(part[1:])
        out += [ep(f"p-{letter}{i}", f"node-{letter}", "foo") for i in range(1, n + 1)]
    return out


def hosts(*names: str) -> list[Node]:
    return [hn(n) for n in names]


SCORE_CASES = [
    pytest.param(
        incoming("foo").spread_constraint(1, HOST, SA, FOO).obj(),
        [],
        hosts("node-a", "node-b"),
        [],
        None,
        {"node-a": 100, "node-b": 100},
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, HOST, SA, FOO).obj(),
        foo_pods("a2 b1"),
        hosts("node-a"),
        hosts("node-b"),
        None,
        {"node-a": 100},
        id="one constraint on node, only one node is candidate",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, HOST, SA, FOO).obj(),
        foo_pods("a1 b1"),
        hosts("node-a", "node-b"),
        [],
        None,
        {"node-a": 100, "node-b": 100},
        id="one constraint on node, all nodes have the same number of matching pods",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, HOST, SA, FOO).obj(),
        foo_pods("a2 b1 d3"),
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        None,
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
        id="one constraint on node, all 4 nodes are candidates",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, HOST, SA, None).obj(),
        foo_pods("a2 b1 d3"),
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        None,
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
        id="one constraint on node, null selector",
    ),
    pytest.param(
        incoming("foo").spread_constraint(2, HOST, SA, FOO).obj(),
        foo_pods("a2 b1 d3"),
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        None,
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
        id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
    ),
    pytest.param(
        incoming("foo").spread_constraint(3, HOST, SA, FOO).obj(),
        foo_pods("a4 b3 c2 d1"),
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        None,
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
        id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
    ),
    pytest.param(
        incoming("foo").obj(),
        foo_pods("a4 b3 c2 d1"),
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        {"Service": [{"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"foo": ""}}}]},
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
        id="system defaulting, nodes don't have zone, pods match service",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, HOST, SA, FOO).obj(),
        foo_pods("a4 b2 x1 y3"),
        hosts("node-a", "node-b", "node-x"),
        hosts("node-y"),
        None,
        {"node-a": 33, "node-b": 83, "node-x": 100},
        id="one constraint on node, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, HOST, SA, FOO).obj(),
        foo_pods("a4 b2 x1 y3"),
        [hn("node-a"), node("node-b", n="node-b"), hn("node-x")],
        hosts("node-y"),
        None,
        {"node-a": 16, "node-b": 0, "node-x": 100},
        id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, FOO).obj(),
        foo_pods("a4 b2 x1 y3"),
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2")],
        [hn("node-y", "zone2")],
        None,
        {"node-a": 75, "node-b": 75, "node-x": 100},
        id="one constraint on zone, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, FOO).spread_constraint(1, HOST, SA, FOO).obj(),
        foo_pods("a2 b1 x2 y4"),
        [hn("node-a", "zone1"), hn("node-x", "zone2")],
        [hn("node-b", "zone1"), hn("node-y", "zone2")],
        None,
        {"node-a": 100, "node-x": 63},
        id="two Constraints on zone and node, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, "zone", SA, BAR)
        .obj(),
        [
            ep("p-a1", "node-a", "foo", "bar"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo", "bar"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo", "bar"),
            ep("p-y3", "node-y", "foo"),
        ],
        [node("node-a", zone="zone1"), node("node-x", zone="zone2")],
        [node("node-b", zone="zone1"), node("node-y", zone="zone2")],
        None,
        {"node-a": 85, "node-x": 100},
        id="two Constraints on zone, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOST, SA, BAR)
        .obj(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-b1", "node-b", "foo", "bar"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "bar"),
        ],
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2"), hn("node-y", "zone2")],
        [],
        None,
        {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
        id="two Constraints on zone and node, with different labelSelectors",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOST, SA, BAR)
        .obj(),
        [ep("p-b1", "node-b", "bar"), ep("p-x1", "node-x", "foo"), ep("p-y1", "node-y", "foo", "bar")],
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2"), hn("node-y", "zone2")],
        [],
        None,
        {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
        id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOST, SA, BAR)
        .obj(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-b1", "node-b", "foo", "bar"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "bar"),
        ],
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2")],
        [hn("node-y", "zone2")],
        None,
        {"node-a": 50, "node-b": 25, "node-x": 100},
        id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, HOST, SA, FOO).obj(),
        [
            ep("p-a1", "node-a", "foo", ns="ns1"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-b2", "node-b", "foo"),
        ],
        hosts("node-a", "node-b"),
        [],
        None,
        {"node-a": 100, "node-b": 33},
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, HOST, SA, FOO).obj(),
        [
            make_pod().name("p-a").node("node-a").label("foo", "").terminating().obj(),
            ep("p-b", "node-b", "foo"),
        ],
        hosts("node-a", "node-b"),
        [],
        None,
        {"node-a": 100, "node-b": 0},
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        incoming("foo").spread_constraint(2, "node", SA, FOO, 10).obj(),
        foo_pods("a2 b2 c1"),
        [kn("node-a"), kn("node-b"), kn("node-c")],
        [],
        None,
        {"node-a": 75, "node-b": 75, "node-c": 100},
        id="minDomains has no effect when ScheduleAnyway",
    ),
    pytest.param(
        incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", SA, FOO).obj(),
        foo_pods("a2 b1 c1"),
        [kn("node-a", foo=""), kn("node-b", foo=""), kn("node-c")],
        [],
        None,
        {"node-a": 0, "node-b": 33, "node-c": 100},
        id="NodeAffinityPolicy honoed with labelSelectors",
    ),
    pytest.param(
        incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", SA, FOO, None, IGNORE).obj(),
        foo_pods("a2 b1 c1"),
        [kn("node-a", foo=""), kn("node-b", foo=""), kn("node-c")],
        [],
        None,
        {"node-a": 66, "node-b": 100, "node-c": 100},
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "node", SA, FOO).obj(),
        foo_pods("a2 b1 c1"),
        [kn("node-a", foo=""), kn("node-b", foo=""), kn("node-c")],
        [],
        None,
        {"node-a": 0, "node-b": 33, "node-c": 100},
        id="NodeAffinityPolicy honoed with nodeAffinity",
    ),
    pytest.param(
        incoming("foo")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", SA, FOO, None, IGNORE)
        .obj(),
        foo_pods("a2 b1 c1"),
        [kn("node-a", foo=""), kn("node-b", foo=""), kn("node-c")],
        [],
        None,
        {"node-a": 66, "node-b": 100, "node-c": 100},
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "node", SA, FOO, None, None, HONOR).obj(),
        foo_pods("a2 b1 c1"),
        [kn("node-a"), kn("node-b"), kn("node-c", taints=True)],
        [],
        None,
        {"node-a": 0, "node-b": 33, "node-c": 100},
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "node", SA, FOO).obj(),
        foo_pods("a2 b1 c1"),
        [kn("node-a"), kn("node-b"), kn("node-c", taints=True)],
        [],
        None,
        {"node-a": 66, "node-b": 100, "node-c": 100},
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", SA, make_label_selector().obj(), None, None, None, ["foo"])
        .spread_constraint(1, HOST, SA, make_label_selector().obj(), None, None, None, ["bar"])
        .obj(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-b1", "node-b", "foo", "bar"),
            ep("p-y1", "node-c", "foo"),
            ep("p-y2", "node-c", "bar"),
        ],
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-c", "zone2"), hn("node-d", "zone2")],
        [],
        None,
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        incoming("foo", "bar", "baz")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOST, SA, BAR, None, None, None, ["baz"])
        .obj(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-b1", "node-b", "foo", "bar", "baz"),
            ep("p-c1", "node-c", "foo"),
            ep("p-c2", "node-c", "bar"),
            ep("p-d3", "node-c", "bar", "baz"),
        ],
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-c", "zone2"), hn("node-d", "zone2")],
        [],
        None,
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "nodes", "failed", "objs", "want"), SCORE_CASES)
def test_pod_topology_spread_score(
    pod: Pod,
    existing: list[Pod],
    nodes: list[Node],
    failed: list[Node],
    objs: dict[str, list[dict[str, Any]]] | None,
    want: dict[str, int],
) -> None:
    pl = new_plugin(
        PodTopologySpread, new_snapshot(existing, [*nodes, *failed], objs), {"defaultingType": "System"}
    )
    state = CycleState()
    candidates = [pl.snapshot.node_info_by_name[n.name] for n in nodes]
    assert pl.pre_score(state, pod, candidates).code == Code.SUCCESS
    got: dict[str, int] = {}
    for ni in candidates:
        score, status = pl.score(state, pod, ni)
        assert status.code == Code.SUCCESS
        got[ni.name] = score
    assert pl.normalize_score(state, pod, got).code == Code.SUCCESS
    assert got == want
