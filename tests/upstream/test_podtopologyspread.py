"""Port of kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go
(TestPreFilterState, TestPreFilterStateAddPod, TestPreFilterStateRemovePod, TestSingleConstraint,
TestMultipleConstraints, TestPreFilterDisabled).

Not ported: cases that switch the NodeInclusionPolicyInPodTopologySpread / MatchLabelKeysInPodTopologySpread
gates off (both are on in every release kdiagnose replays, v1.31-v1.35), BenchmarkFilter, TestPodTopoSignatures
(Go-only pod signatures for the scheduling queue).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY, PreFilterState
from kdiagnose.scheduler.plugins.podtopologyspread.plugin import PodTopologySpread
from tests.upstream.builders import (
    PodWrapper,
    make_label_selector,
    make_node,
    make_pod,
    new_plugin,
    new_snapshot,
)

DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
MAX_INT32 = 2**31 - 1
FOO = make_label_selector().exists("foo").obj()
BAR = make_label_selector().exists("bar").obj()
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
LIST_ARGS: dict[str, Any] = {"defaultingType": "List"}

OK = Code.SUCCESS
U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def zn(name: str, zone: str, **extra: str) -> Node:
    """st.MakeNode().Name(name).Label("zone", zone).Label("node", name)[.Label(k, v)...]."""
    w = make_node().name(name).label("zone", zone).label("node", name)
    for k, v in extra.items():
        w.label(k, v)
    return w.obj()


def nn(name: str, taints: list[dict[str, str]] | None = None, **extra: str) -> Node:
    """st.MakeNode().Name(name).Label("node", name)[.Label(k, v)...][.Taints(taints)]."""
    w = make_node().name(name).label("node", name)
    for k, v in extra.items():
        w.label(k, v)
    if taints:
        w.taints(taints)
    return w.obj()


def taint_zn(name: str, zone: str, **extra: str) -> Node:
    w = make_node().name(name).label("zone", zone).label("node", name).taints(TAINTS)
    for k, v in extra.items():
        w.label(k, v)
    return w.obj()


def ep(name: str, node: str, *keys: str, ns: str | None = None, **labels: str) -> Pod:
    """An existing pod: st.MakePod().Name(name)[.Namespace(ns)].Node(node).Label(k, "")...Label(k, v)..."""
    w = make_pod().name(name).node(node)
    if ns:
        w.namespace(ns)
    for k in keys:
        w.label(k, "")
    for k, v in labels.items():
        w.label(k, v)
    return w.obj()


def incoming(*keys: str, **labels: str) -> PodWrapper:
    w = make_pod().name("p")
    for k in keys:
        w.label(k, "")
    for k, v in labels.items():
        w.label(k, v)
    return w


def four_nodes() -> list[Node]:
    return [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


def sorted_paths(s: PreFilterState) -> list[list[tuple[str, int]]]:
    """criticalPaths.sort() of the upstream test: equal MatchNums are compared in alphabetical order."""
    out = []
    for cp in s.critical_paths:
        (v0, n0), (v1, n1) = cp.paths
        if n0 == n1 and v0 > v1:
            v0, v1 = v1, v0
        out.append([(v0, n0), (v1, n1)])
    return out


def norm_paths(want: list[list[tuple[str, int]]]) -> list[list[tuple[str, int]]]:
    out = []
    for (v0, n0), (v1, n1) in want:
        if n0 == n1 and v0 > v1:
            v0, v1 = v1, v0
        out.append([(v0, n0), (v1, n1)])
    return out


def prefilter(pl: PodTopologySpread, pod: Pod) -> tuple[CycleState, Code]:
    state = CycleState()
    _, status = pl.pre_filter(state, pod)
    return state, status.code


NEW = ("", MAX_INT32)


def constraint_fields(s: PreFilterState) -> list[tuple[int, str, int, str, str]]:
    return [
        (c.max_skew, c.topology_key, c.min_domains, c.node_affinity_policy, c.node_taints_policy)
        for c in s.constraints
    ]


def C(key: str, skew: int = 1, min_domains: int = 1, na: str = HONOR, nt: str = IGNORE) -> tuple[Any, ...]:
    return (skew, key, min_domains, na, nt)


# ---------------------------------------------------------------------------------------------- TestPreFilterState

PRE_FILTER_STATE_CASES = [
    pytest.param(
        incoming(foo="")
        .spread_constraint(5, "zone", DNS, make_label_selector().label("foo", "bar").obj())
        .obj(),
        four_nodes(),
        [],
        None,
        None,
        ([C("zone", 5)], [[("zone1", 0), ("zone2", 0)]], [{"zone1": 0, "zone2": 0}]),
        id="clean cluster with one spreadConstraint",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO).obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo"),
        ],
        None,
        None,
        ([C("zone")], [[("zone2", 2), ("zone1", 3)]], [{"zone1": 3, "zone2": 2}]),
        id="normal case with one spreadConstraint",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, None).obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo"),
        ],
        None,
        None,
        ([C("zone")], [[("zone2", 0), ("zone1", 0)]], [{"zone1": 0, "zone2": 0}]),
        id="normal case with null label selector",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO).obj(),
        [*four_nodes(), zn("node-o", "zone3"), zn("node-p", "zone3")],
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo"),
        ],
        None,
        None,
        ([C("zone")], [[("zone3", 0), ("zone2", 2)]], [{"zone1": 3, "zone2": 2, "zone3": 0}]),
        id="normal case with one spreadConstraint, on a 3-zone cluster",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO).obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo", ns="ns1"),
            ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo", ns="ns2"),
            ep("p-y2", "node-y", "foo"),
        ],
        None,
        None,
        ([C("zone")], [[("zone2", 1), ("zone1", 2)]], [{"zone1": 2, "zone2": 1}]),
        id="namespace mismatch doesn't count",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, FOO).obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo"),
            ep("p-y3", "node-y", "foo"),
            ep("p-y4", "node-y", "foo"),
        ],
        None,
        None,
        (
            [C("zone"), C("node")],
            [[("zone1", 3), ("zone2", 4)], [("node-x", 0), ("node-b", 1)]],
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
        ),
        id="normal case with two spreadConstraints",
    ),
    pytest.param(
        incoming("foo")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", SA, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo"),
            ep("p-y3", "node-y", "foo"),
            ep("p-y4", "node-y", "foo"),
        ],
        None,
        None,
        (
            [C("zone"), C("node")],
            [[("zone1", 3), ("zone2", 4)], [("node-b", 1), ("node-a", 2)]],
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        ),
        id="soft spreadConstraints should be bypassed",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [ep("p-a", "node-a", "foo"), ep("p-b", "node-b", "bar")],
        None,
        None,
        (
            [C("zone"), C("node")],
            [[("zone2", 0), ("zone1", 1)], [("node-a", 0), ("node-y", 0)]],
            [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
        ),
        id="different labelSelectors - simple version",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo", "bar"),
            ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo", "bar"),
            ep("p-y3", "node-y", "foo"),
            ep("p-y4", "node-y", "foo", "bar"),
        ],
        None,
        None,
        (
            [C("zone"), C("node")],
            [[("zone1", 3), ("zone2", 4)], [("node-b", 0), ("node-a", 1)]],
            [{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}],
        ),
        id="different labelSelectors - complex pods",
    ),
    pytest.param(
        incoming("foo")
        .node_affinity_not_in("node", ["node-x"])
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo"),
            ep("p-y3", "node-y", "foo"),
            ep("p-y4", "node-y", "foo"),
        ],
        None,
        None,
        (
            [C("zone"), C("node")],
            [[("zone1", 3), ("zone2", 4)], [("node-b", 1), ("node-a", 2)]],
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        ),
        id="two spreadConstraints, and with podAffinity",
    ),
    pytest.param(
        incoming(foo="bar", baz="kar").obj(),
        [],
        [],
        [
            {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
            {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DNS},
        ],
        {
            "Service": [
                {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"foo": "bar"}}}
            ]
        },
        ([C("node", 3), C("rack", 5)], [[NEW, NEW], [NEW, NEW]], [{}, {}]),
        id="default constraints and a service",
    ),
    pytest.param(
        incoming(foo="bar").obj(),
        [],
        [],
        [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        {
            "Service": [
                {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"baz": "kep"}}}
            ]
        },
        "skip",
        id="default constraints and a service that doesn't match",
    ),
    pytest.param(
        incoming(foo="bar", baz="tar")
        .spread_constraint(1, "zone", DNS, make_label_selector().label("baz", "tar").obj())
        .spread_constraint(2, "planet", SA, make_label_selector().label("fot", "rok").obj())
        .obj(),
        [],
        [],
        [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        {
            "Service": [
                {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"foo": "bar"}}}
            ]
        },
        ([C("zone")], [[NEW, NEW]], [{}]),
        id="default constraints and a service, but pod has constraints",
    ),
    pytest.param(
        incoming(foo="bar").obj(),
        [],
        [],
        [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA}],
        {
            "Service": [
                {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"foo": "bar"}}}
            ]
        },
        "skip",
        id="default soft constraints and a service",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, FOO).obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo"),
            ep("p-y3", "node-y", "foo"),
            ep("p-y4", "node-y", "foo"),
        ],
        None,
        None,
        (
            [C("zone"), C("node")],
            [[("zone1", 3), ("zone2", 4)], [("node-x", 0), ("node-b", 1)]],
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
        ),
        id="TpKeyToDomainsNum is calculated when MinDomains is enabled",
    ),
    pytest.param(
        incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", DNS, BAR).obj(),
        [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-c", bar="")],
        [
            ep("p-a", "node-a", "bar"),
            ep("p-b", "node-b", "bar"),
            ep("p-c", "node-b", "bar"),
            ep("p-d", "node-c"),
        ],
        None,
        None,
        ([C("node")], [[("node-a", 1), ("node-b", 2)]], [{"node-a": 1, "node-b": 2}]),
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", DNS, BAR, None, IGNORE).obj(),
        [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-c", bar="")],
        [
            ep("p-a", "node-a", "bar"),
            ep("p-b", "node-b", "bar"),
            ep("p-c", "node-b", "bar"),
            ep("p-d", "node-c"),
        ],
        None,
        None,
        (
            [C("node", na=IGNORE)],
            [[("node-c", 0), ("node-a", 1)]],
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "node", DNS, BAR).obj(),
        [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-c", bar="")],
        [
            ep("p-a", "node-a", "bar"),
            ep("p-c", "node-b", "bar"),
            ep("p-d", "node-b", "bar"),
            ep("p-e", "node-c"),
        ],
        None,
        None,
        ([C("node")], [[("node-a", 1), ("node-b", 2)]], [{"node-a": 1, "node-b": 2}]),
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        incoming("foo")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", DNS, BAR, None, IGNORE)
        .obj(),
        [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-c", bar="")],
        [
            ep("p-a", "node-a", "bar"),
            ep("p-b", "node-b", "bar"),
            ep("p-c", "node-b", "bar"),
            ep("p-d", "node-c"),
        ],
        None,
        None,
        (
            [C("node", na=IGNORE)],
            [[("node-c", 0), ("node-a", 1)]],
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "node", DNS, BAR).obj(),
        [nn("node-a"), nn("node-b"), nn("node-c", TAINTS, bar="")],
        [
            ep("p-a", "node-a", "bar"),
            ep("p-b", "node-b", "bar"),
            ep("p-c", "node-b", "bar"),
            ep("p-d", "node-c"),
        ],
        None,
        None,
        (
            [C("node")],
            [[("node-c", 0), ("node-a", 1)]],
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "node", DNS, BAR, None, None, HONOR).obj(),
        [nn("node-a"), nn("node-b"), nn("node-c", TAINTS, bar="")],
        [
            ep("p-a", "node-a", "bar"),
            ep("p-b", "node-b", "bar"),
            ep("p-c", "node-b", "bar"),
            ep("p-d", "node-c"),
        ],
        None,
        None,
        ([C("node", nt=HONOR)], [[("node-a", 1), ("node-b", 2)]], [{"node-a": 1, "node-b": 2}]),
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        incoming("foo")
        .toleration("node.kubernetes.io/unschedulable")
        .spread_constraint(1, "node", DNS, BAR, None, None, HONOR)
        .obj(),
        [nn("node-a"), nn("node-b"), nn("node-c", TAINTS, bar="")],
        [
            ep("p-a", "node-a", "bar"),
            ep("p-b", "node-b", "bar"),
            ep("p-c", "node-b", "bar"),
            ep("p-d", "node-c"),
        ],
        None,
        None,
        (
            [C("node", nt=HONOR)],
            [[("node-c", 0), ("node-a", 1)]],
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        id="NodeTaintsPolicy honored with tolerated taints",
    ),
    pytest.param(
        incoming("foo")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO, None, IGNORE)
        .obj(),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo="")],
        [ep("p-b1", "node-b", "foo"), ep("p-b2", "node-b", "foo"), ep("p-x1", "node-x", "foo")],
        None,
        None,
        (
            [C("zone"), C("node", na=IGNORE)],
            [[("zone1", 0), ("zone2", 1)], [("node-a", 0), ("node-x", 1)]],
            [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
        ),
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    pytest.param(
        incoming("foo")
        .spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        [zn("node-a", "zone1", foo=""), taint_zn("node-b", "zone1"), zn("node-x", "zone2", foo="")],
        [ep("p-b1", "node-b", "foo"), ep("p-b2", "node-b", "foo"), ep("p-x1", "node-x", "foo")],
        None,
        None,
        (
            [C("zone", nt=HONOR), C("node")],
            [[("zone1", 0), ("zone2", 1)], [("node-a", 0), ("node-x", 1)]],
            [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
        ),
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    pytest.param(
        incoming("foo")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        [
            zn("node-a", "zone1"),
            taint_zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2"),
        ],
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-x1", "node-x", "foo"),
            ep("p-y1", "node-y", "foo"),
        ],
        None,
        None,
        (
            [C("zone"), C("node")],
            [[("zone1", 0), ("zone2", 1)], [("node-b", 0), ("node-x", 1)]],
            [{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}],
        ),
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        incoming("foo")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO, None, IGNORE)
        .spread_constraint(1, "node", DNS, FOO, None, None, HONOR)
        .obj(),
        [
            zn("node-a", "zone1"),
            taint_zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2", foo=""),
        ],
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-x1", "node-x", "foo"),
            ep("p-x2", "node-x", "foo"),
            ep("p-y1", "node-y", "foo"),
        ],
        None,
        None,
        (
            [C("zone", na=IGNORE), C("node", nt=HONOR)],
            [[("zone1", 2), ("zone2", 3)], [("node-y", 1), ("node-x", 2)]],
            [{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}],
        ),
        id="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
    ),
    pytest.param(
        incoming("foo", bar="a").spread_constraint(1, "zone", DNS, FOO, None, None, None, ["bar"]).obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo", bar="a"),
            ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo", bar="a"),
            ep("p-y2", "node-y", "bar"),
        ],
        None,
        None,
        ([C("zone")], [[("zone2", 1), ("zone1", 1)]], [{"zone1": 1, "zone2": 1}]),
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
    pytest.param(
        incoming(foo="a")
        .spread_constraint(1, "zone", DNS, make_label_selector().obj(), None, None, None, ["foo"])
        .obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", foo="a"),
            ep("p-a2", "node-a", foo="a"),
            ep("p-b1", "node-b", foo="a"),
            ep("p-y1", "node-y", foo="a"),
            ep("p-y2", "node-y", foo="a"),
        ],
        None,
        None,
        ([C("zone")], [[("zone2", 2), ("zone1", 3)]], [{"zone1": 3, "zone2": 2}]),
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, None, None, None, None, ["bar"]).obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", foo="a"),
            ep("p-a2", "node-a", foo="a"),
            ep("p-b1", "node-b", foo="a"),
            ep("p-y1", "node-y", foo="a"),
            ep("p-y2", "node-y", foo="a"),
        ],
        None,
        None,
        ([C("zone")], [[("zone2", 0), ("zone1", 0)]], [{"zone1": 0, "zone2": 0}]),
        id="key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO, None, None, None, ["bar"]).obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", foo="a"),
            ep("p-a2", "node-a", foo="a"),
            ep("p-b1", "node-b", foo="a"),
            ep("p-y1", "node-y", foo="a"),
            ep("p-y2", "node-y", foo="a"),
        ],
        None,
        None,
        ([C("zone")], [[("zone2", 2), ("zone1", 3)]], [{"zone1": 3, "zone2": 2}]),
        id="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "zone", DNS, BAR)
        .obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo", "bar"),
            ep("p-b1", "node-b", "foo"),
            ep("p-x1", "node-x", "bar"),
            ep("p-y1", "node-y", "foo", "bar"),
            ep("p-y2", "node-y", "bar"),
        ],
        None,
        None,
        (
            [C("zone"), C("zone")],
            [[("zone2", 1), ("zone1", 2)], [("zone1", 1), ("zone2", 3)]],
            [{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}],
        ),
        id="two spreadConstraints with the same topologyKey",
    ),
    pytest.param(
        incoming("foo").obj(),
        [zn("node-a", "zone1")],
        [],
        None,
        None,
        "skip",
        id="skip if not specified",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "defaults", "objs", "want"), PRE_FILTER_STATE_CASES)
def test_pre_filter_state(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    defaults: list[dict[str, Any]] | None,
    objs: dict[str, list[dict[str, Any]]] | None,
    want: Any,
) -> None:
    args = {"defaultingType": "List", "defaultConstraints": defaults or []}
    pl = new_plugin(PodTopologySpread, new_snapshot(existing, nodes, objs), args)
    assert isinstance(pl, PodTopologySpread)
    state, code = prefilter(pl, pod)
    if want == "skip":
        assert code == Code.SKIP
        return
    assert code == Code.SUCCESS
    s = state.read(PRE_FILTER_STATE_KEY)
    assert isinstance(s, PreFilterState)
    want_constraints, want_paths, want_counts = want
    assert constraint_fields(s) == want_constraints
    assert s.counts == want_counts
    assert sorted_paths(s) == norm_paths(want_paths)


# --------------------------------------------------------------------------------- TestPreFilterStateAddPod/Remove


def _pfs_after(pl: PodTopologySpread, preemptor: Pod, node: str, other: Pod, delta: int) -> PreFilterState:
    state, code = prefilter(pl, preemptor)
    assert code == Code.SUCCESS
    ni = pl.snapshot.node_info_by_name[node]
    st = pl.add_pod(state, preemptor, other, ni) if delta > 0 else pl.remove_pod(state, preemptor, other, ni)
    assert st.code == Code.SUCCESS
    s = state.read(PRE_FILTER_STATE_KEY)
    assert isinstance(s, PreFilterState)
    return s


NODE_C = [C("node")]
ZONE_NODE_C = [C("zone"), C("node")]
ZONE_C = [C("zone")]


def node_preemptor() -> Pod:
    return incoming("foo").spread_constraint(1, "node", DNS, FOO).obj()


def zone_node_preemptor() -> Pod:
    return incoming("foo").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, FOO).obj()


def zone_preemptor(**kw: Any) -> Pod:
    w = incoming("foo")
    if kw.get("not_in"):
        w.node_affinity_not_in("foo", ["bar"])
    if kw.get("tolerate"):
        w.toleration("node.kubernetes.io/unschedulable")
    return w.spread_constraint(1, "zone", DNS, FOO).obj()


def two_zn(a_extra: dict[str, str], b_extra: dict[str, str], a_taint: bool = False) -> list[Node]:
    a = taint_zn("node-a", "zone1", **a_extra) if a_taint else zn("node-a", "zone1", **a_extra)
    return [a, zn("node-b", "zone2", **b_extra)]


ADD_POD_CASES = [
    pytest.param(
        node_preemptor(),
        ep("p-a1", "node-a", "foo"),
        [],
        "node-a",
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        (NODE_C, [[("node-b", 0), ("node-a", 1)]], [{"node-a": 1, "node-b": 0}]),
        id="node a and b both impact current min match",
    ),
    pytest.param(
        node_preemptor(),
        ep("p-a1", "node-a", "foo"),
        [ep("p-b1", "node-b", "foo")],
        "node-a",
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        (NODE_C, [[("node-a", 1), ("node-b", 1)]], [{"node-a": 1, "node-b": 1}]),
        id="only node a impacts current min match",
    ),
    pytest.param(
        node_preemptor(),
        ep("p-a1", "node-a", "foo", ns="ns1"),
        [ep("p-b1", "node-b", "foo")],
        "node-a",
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        (NODE_C, [[("node-a", 0), ("node-b", 1)]], [{"node-a": 0, "node-b": 1}]),
        id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
    ),
    pytest.param(
        node_preemptor(),
        ep("p-b2", "node-b", "foo"),
        [ep("p-b1", "node-b", "foo")],
        "node-b",
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        (NODE_C, [[("node-a", 0), ("node-b", 2)]], [{"node-a": 0, "node-b": 2}]),
        id="add pod on non-critical node won't trigger re-calculation",
    ),
    pytest.param(
        zone_node_preemptor(),
        ep("p-a1", "node-a", "foo"),
        [],
        "node-a",
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        (
            ZONE_NODE_C,
            [[("zone2", 0), ("zone1", 1)], [("node-x", 0), ("node-a", 1)]],
            [{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}],
        ),
        id="node a and x both impact topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        zone_node_preemptor(),
        ep("p-a1", "node-a", "foo"),
        [ep("p-x1", "node-x", "foo")],
        "node-a",
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        (
            ZONE_NODE_C,
            [[("zone1", 1), ("zone2", 1)], [("node-a", 1), ("node-x", 1)]],
            [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}],
        ),
        id="only node a impacts topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        zone_node_preemptor(),
        ep("p-a1", "node-a", "foo"),
        [ep("p-b1", "node-b", "foo"), ep("p-b2", "node-b", "foo"), ep("p-x1", "node-x", "foo")],
        "node-a",
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        (
            ZONE_NODE_C,
            [[("zone2", 1), ("zone1", 3)], [("node-a", 1), ("node-x", 1)]],
            [{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}],
        ),
        id="node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        ep("p-a1", "node-a", "foo"),
        [ep("p-b1", "node-b", "foo", "bar"), ep("p-x1", "node-x", "foo", "bar"), ep("p-x2", "node-x", "bar")],
        "node-a",
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        (
            ZONE_NODE_C,
            [[("zone2", 1), ("zone1", 2)], [("node-a", 0), ("node-b", 1)]],
            [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}],
        ),
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        ep("p-a1", "node-a", "foo", "bar"),
        [ep("p-b1", "node-b", "bar"), ep("p-x1", "node-x", "foo", "bar"), ep("p-x2", "node-x", "bar")],
        "node-a",
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        (
            ZONE_NODE_C,
            [[("zone1", 1), ("zone2", 1)], [("node-a", 1), ("node-b", 1)]],
            [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}],
        ),
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
    ),
    pytest.param(
        zone_preemptor(not_in=True),
        ep("p-a1", "node-a", "foo", zone="zone1"),
        [ep("p-a2", "node-a", "foo", zone="zone1"), ep("p-b1", "node-b", "foo", zone="zone2")],
        "node-a",
        two_zn({"foo": "bar"}, {"foo": ""}),
        (ZONE_C, [[("zone2", 1), NEW]], [{"zone2": 1}]),
        id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        zone_preemptor(),
        ep("p-b1", "node-b", "foo", zone="zone2"),
        [ep("p-a1", "node-a", "foo", zone="zone1"), ep("p-b2", "node-b", "foo", zone="zone2")],
        "node-b",
        two_zn({"foo": "bar"}, {"foo": ""}),
        (ZONE_C, [[("zone1", 1), ("zone2", 2)]], [{"zone1": 1, "zone2": 2}]),
        id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        zone_preemptor(),
        ep("p-b1", "node-b", zone="zone2"),
        [ep("p-a1", "node-a", "foo", zone="zone1"), ep("p-b2", "node-b", "foo", zone="zone2")],
        "node-b",
        two_zn({"foo": "bar"}, {"foo": ""}),
        (ZONE_C, [[("zone1", 1), ("zone2", 1)]], [{"zone1": 1, "zone2": 1}]),
        id="add a label selector not matched pod when with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        zone_preemptor(tolerate=True),
        ep("p-b1", "node-b", "foo", zone="zone2"),
        [ep("p-a1", "node-a", "foo", zone="zone1"), ep("p-b2", "node-b", "foo", zone="zone2")],
        "node-b",
        two_zn({}, {}, a_taint=True),
        (ZONE_C, [[("zone1", 1), ("zone2", 2)]], [{"zone1": 1, "zone2": 2}]),
        id="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
    ),
]


@pytest.mark.parametrize(("preemptor", "added", "existing", "node", "nodes", "want"), ADD_POD_CASES)
def test_pre_filter_state_add_pod(
    preemptor: Pod, added: Pod, existing: list[Pod], node: str, nodes: list[Node], want: Any
) -> None:
    pl = new_plugin(PodTopologySpread, new_snapshot(existing, nodes), LIST_ARGS)
    assert isinstance(pl, PodTopologySpread)
    s = _pfs_after(pl, preemptor, node, added, 1)
    want_constraints, want_paths, want_counts = want
    assert constraint_fields(s) == want_constraints
    assert s.counts == want_counts
    assert sorted_paths(s) == norm_paths(want_paths)


REMOVE_POD_CASES = [
    pytest.param(
        zone_preemptor(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-x1", "node-x", "foo")],
        0,
        None,
        "node-a",
        (ZONE_C, [[("zone1", 1), ("zone2", 1)]], [{"zone1": 1, "zone2": 1}]),
        id="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
    ),
    pytest.param(
        zone_preemptor(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-x1", "node-x", "foo"),
            ep("p-y1", "node-y", "foo"),
        ],
        0,
        None,
        "node-a",
        (ZONE_C, [[("zone1", 1), ("zone2", 2)]], [{"zone1": 1, "zone2": 2}]),
        id="one spreadConstraint on node, topologyKeyToMinPodsMap changed",
    ),
    pytest.param(
        zone_preemptor(),
        four_nodes(),
        [
            ep("p-a0", "node-a", "bar"),
            ep("p-a1", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-x1", "node-x", "foo"),
            ep("p-y1", "node-y", "foo"),
        ],
        0,
        None,
        "node-a",
        (ZONE_C, [[("zone1", 2), ("zone2", 2)]], [{"zone1": 2, "zone2": 2}]),
        id="delete an irrelevant pod won't help",
    ),
    pytest.param(
        zone_preemptor(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-x1", "node-x", "foo"),
            ep("p-y1", "node-y", "foo"),
        ],
        -1,
        ep("p-a0", "node-a", "bar"),
        "node-a",
        (ZONE_C, [[("zone1", 2), ("zone2", 2)]], [{"zone1": 2, "zone2": 2}]),
        id="delete a non-existing pod won't help",
    ),
    pytest.param(
        zone_node_preemptor(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-x1", "node-x", "foo"),
            ep("p-x2", "node-x", "foo"),
        ],
        3,
        None,
        "node-x",
        (
            ZONE_NODE_C,
            [[("zone2", 1), ("zone1", 3)], [("node-b", 1), ("node-x", 1)]],
            [{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}],
        ),
        id="two spreadConstraints",
    ),
    pytest.param(
        zone_preemptor(not_in=True),
        two_zn({"foo": "bar"}, {"foo": ""}),
        [ep("p-a2", "node-a", "foo", zone="zone1"), ep("p-b1", "node-b", "foo", zone="zone2")],
        -1,
        ep("p-a1", "node-a", "foo", zone="zone1"),
        "node-a",
        (ZONE_C, [[("zone2", 1), NEW]], [{"zone2": 1}]),
        id="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        zone_preemptor(),
        two_zn({"foo": "bar"}, {"foo": ""}),
        [ep("p-a1", "node-a", "foo", zone="zone1"), ep("p-b2", "node-b", "foo", zone="zone2")],
        -1,
        ep("p-b1", "node-b", "foo", zone="zone2"),
        "node-b",
        (ZONE_C, [[("zone2", 0), ("zone1", 1)]], [{"zone2": 0, "zone1": 1}]),
        id="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "nodes", "existing", "deleted_idx", "deleted", "node", "want"), REMOVE_POD_CASES
)
def test_pre_filter_state_remove_pod(
    preemptor: Pod,
    nodes: list[Node],
    existing: list[Pod],
    deleted_idx: int,
    deleted: Pod | None,
    node: str,
    want: Any,
) -> None:
    pl = new_plugin(PodTopologySpread, new_snapshot(existing, nodes), LIST_ARGS)
    assert isinstance(pl, PodTopologySpread)
    victim = existing[deleted_idx] if 0 <= deleted_idx < len(existing) else deleted
    assert victim is not None
    s = _pfs_after(pl, preemptor, node, victim, -1)
    want_constraints, want_paths, want_counts = want
    assert constraint_fields(s) == want_constraints
    assert s.counts == want_counts
    assert sorted_paths(s) == norm_paths(want_paths)


# ------------------------------------------------------------------ TestSingleConstraint / TestMultipleConstraints


def three_pods_foo(nodes: tuple[str, ...]) -> list[Pod]:
    names = ("p-b1", "p-b2", "p-y1")
    return [ep(n, node, "foo") for n, node in zip(names, nodes, strict=True)]


SPREAD_2_1_0_3 = [
    ep("p-a1", "node-a", "foo"),
    ep("p-a2", "node-a", "foo"),
    ep("p-b1", "node-b", "foo"),
    ep("p-y1", "node-y", "foo"),
    ep("p-y2", "node-y", "foo"),
    ep("p-y3", "node-y", "foo"),
]

SINGLE_CONSTRAINT_CASES = [
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO).obj(),
        four_nodes(),
        [],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="no existing pods",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, BAR).obj(),
        four_nodes(),
        [],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="no existing pods, incoming pod doesn't match itself",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO).obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo", ns="ns1"),
            ep("p-b1", "node-a", "foo", ns="ns2"),
            ep("p-x1", "node-x", "foo"),
            ep("p-y1", "node-y", "foo"),
        ],
        {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U},
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, None).obj(),
        four_nodes(),
        [ep("p-x1", "node-x", "foo"), ep("p-y1", "node-y", "foo")],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="existing pods do not match null selector",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO).obj(),
        four_nodes(),
        SPREAD_2_1_0_3,
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="pods spread across zones as 3/3, all nodes fit",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO).obj(),
        [
            zn("node-a", "zone1"),
            make_node().name("node-b").label("zon", "zone1").label("node", "node-b").obj(),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ],
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-x1", "node-x", "foo"),
            ep("p-y1", "node-y", "foo"),
        ],
        {"node-a": OK, "node-b": UU, "node-x": U, "node-y": U},
        id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "rack", DNS, FOO).obj(),
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [],
        {"node-a": UU, "node-x": UU},
        id="pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "node", DNS, FOO).obj(),
        four_nodes(),
        SPREAD_2_1_0_3,
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
        id="pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    pytest.param(
        incoming("foo").spread_constraint(2, "node", DNS, FOO).obj(),
        four_nodes(),
        SPREAD_2_1_0_3,
        {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U},
        id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
    ),
    pytest.param(
        incoming("bar").spread_constraint(1, "node", DNS, FOO).obj(),
        four_nodes(),
        SPREAD_2_1_0_3,
        {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U},
        id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    pytest.param(
        incoming("foo")
        .node_affinity_in("node", ["node-a", "node-y"])
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        four_nodes(),
        SPREAD_2_1_0_3,
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": U},
        id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "node", DNS, FOO).obj(),
        [nn("node-a"), nn("node-b")],
        [
            make_pod().name("p-a").node("node-a").label("foo", "").terminating().obj(),
            ep("p-b", "node-b", "foo"),
        ],
        {"node-a": OK, "node-b": U},
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        incoming("foo").node_affinity_not_in("node", ["node-b"]).spread_constraint(1, "zone", DNS, FOO).obj(),
        four_nodes(),
        [ep("p-b1", "node-b", "foo"), ep("p-b2", "node-b", "foo"), ep("p-y1", "node-y", "foo")],
        {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U},
        id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
    ),
    pytest.param(
        incoming("foo").spread_constraint(2, "node", DNS, FOO, 4).obj(),
        [nn("node-a"), nn("node-b"), nn("node-c")],
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-b2", "node-b", "foo"),
            ep("p-c1", "node-c", "foo"),
        ],
        {"node-a": U, "node-b": U, "node-c": OK},
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
        "then the third node fits",
    ),
    pytest.param(
        incoming("foo").spread_constraint(2, "node", DNS, FOO, 2).obj(),
        [nn("node-a"), nn("node-b"), nn("node-c")],
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo"),
            ep("p-b2", "node-b", "foo"),
            ep("p-c1", "node-c", "foo"),
        ],
        {"node-a": OK, "node-b": OK, "node-c": OK},
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
        "then the all nodes fit",
    ),
    pytest.param(
        incoming("foo").spread_constraint(2, "zone", DNS, FOO, 3).obj(),
        four_nodes(),
        three_pods_foo(("node-a", "node-b", "node-y")),
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": OK},
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
        "then the third and fourth nodes fit",
    ),
    pytest.param(
        incoming("foo").spread_constraint(2, "zone", DNS, FOO, 1).obj(),
        four_nodes(),
        three_pods_foo(("node-a", "node-b", "node-y")),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
        "then the all nodes fit",
    ),
    pytest.param(
        incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", DNS, FOO).obj(),
        [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-x", foo=""), nn("node-y")],
        three_pods_foo(("node-a", "node-b", "node-y")),
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": OK},
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", DNS, FOO, None, IGNORE).obj(),
        [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-x", foo=""), nn("node-y")],
        three_pods_foo(("node-a", "node-b", "node-y")),
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "node", DNS, FOO).obj(),
        [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-x", foo=""), nn("node-y")],
        three_pods_foo(("node-a", "node-b", "node-y")),
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": OK},
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        incoming("foo")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", DNS, FOO, None, IGNORE)
        .obj(),
        [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-x", foo=""), nn("node-y")],
        three_pods_foo(("node-a", "node-b", "node-y")),
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
        id="NodeAffinityPolicy ignored with nodeAffinity (upstream: ignored with labelSelectors, 2nd)",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "node", DNS, FOO, None, None, HONOR).obj(),
        [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-x", foo=""), nn("node-y", TAINTS)],
        three_pods_foo(("node-a", "node-b", "node-y")),
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": OK},
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "node", DNS, FOO).obj(),
        [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-x", foo=""), nn("node-y", TAINTS)],
        three_pods_foo(("node-a", "node-b", "node-y")),
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
        id="NodeTaintsPolicy ignored",
    ),
]

SPREAD_3_4 = [*SPREAD_2_1_0_3, ep("p-y4", "node-y", "foo")]

MULTIPLE_CONSTRAINTS_CASES = [
    pytest.param(
        zone_node_preemptor(),
        four_nodes(),
        SPREAD_2_1_0_3,
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
        id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
    ),
    pytest.param(
        zone_node_preemptor(),
        four_nodes(),
        SPREAD_3_4,
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
        id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        four_nodes(),
        [ep("p-a1", "node-a", "foo"), ep("p-y1", "node-y", "bar")],
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
        id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        four_nodes(),
        [ep("p-a1", "node-a", "foo"), ep("p-x1", "node-x", "bar"), ep("p-y1", "node-y", "bar")],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
        id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo"),
            ep("p-a2", "node-a", "foo", "bar"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo", "bar"),
            ep("p-y3", "node-y", "foo"),
        ],
        {"node-a": U, "node-b": OK, "node-x": U, "node-y": U},
        id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
    ),
    pytest.param(
        incoming("bar").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, BAR).obj(),
        four_nodes(),
        [ep("p-a1", "node-a", "foo"), ep("p-x1", "node-x", "bar"), ep("p-y1", "node-y", "bar")],
        {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U},
        id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
    ),
    pytest.param(
        zone_node_preemptor(),
        [
            zn("node-a", "zone1"),
            zn("node-b", "zone1"),
            make_node().name("node-x").label("zone", "zone2").obj(),
            zn("node-y", "zone2"),
        ],
        [ep("p-a1", "node-a", "foo"), ep("p-y3", "node-y", "foo")],
        {"node-a": U, "node-b": OK, "node-x": UU, "node-y": U},
        id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
    ),
    pytest.param(
        incoming("foo")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO, None, IGNORE)
        .obj(),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2"),
        ],
        [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-y1", "node-y", "foo")],
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    pytest.param(
        incoming("foo")
        .spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            taint_zn("node-y", "zone2"),
        ],
        [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-y1", "node-y", "foo")],
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    pytest.param(
        incoming("foo")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            taint_zn("node-y", "zone2", foo=""),
        ],
        [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-y1", "node-y", "foo")],
        {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U},
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        incoming("foo")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
        .spread_constraint(1, "node", DNS, FOO, None, IGNORE)
        .obj(),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            taint_zn("node-y", "zone2", foo=""),
        ],
        [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-y1", "node-y", "foo")],
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
        id="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", DNS, BAR)
        .spread_constraint(1, "zone", DNS, FOO)
        .obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo", "bar"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo", "bar"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo", "bar"),
            ep("p-y3", "node-y", "foo"),
        ],
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": OK},
        id="two Constraints on zone, spreads = [3/3, 2/1]",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", DNS, BAR)
        .spread_constraint(1, "zone", DNS, FOO)
        .obj(),
        four_nodes(),
        [
            ep("p-a1", "node-a", "foo", "bar"),
            ep("p-a2", "node-a", "foo"),
            ep("p-b1", "node-b", "foo", "bar"),
            ep("p-y1", "node-y", "foo"),
            ep("p-y2", "node-y", "foo", "bar"),
            ep("p-y3", "node-y", "foo"),
            ep("p-y4", "node-y", "foo"),
        ],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
        id="two Constraints on zone, spreads = [3/4, 2/1]",
    ),
]


def _filter_codes(pod: Pod, nodes: list[Node], existing: list[Pod]) -> dict[str, Code]:
    pl = new_plugin(PodTopologySpread, new_snapshot(existing, nodes), LIST_ARGS)
    assert isinstance(pl, PodTopologySpread)
    state, code = prefilter(pl, pod)
    assert code == Code.SUCCESS
    return {ni.name: pl.filter(state, pod, ni).code for ni in pl.snapshot.node_infos}


@pytest.mark.parametrize(("pod", "nodes", "existing", "want"), SINGLE_CONSTRAINT_CASES)
def test_single_constraint(pod: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, Code]) -> None:
    assert _filter_codes(pod, nodes, existing) == want


@pytest.mark.parametrize(("pod", "nodes", "existing", "want"), MULTIPLE_CONSTRAINTS_CASES)
def test_multiple_constraints(
    pod: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, Code]
) -> None:
    assert _filter_codes(pod, nodes, existing) == want


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter state is an Error (fwk.ErrNotFound)."""
    pl = new_plugin(PodTopologySpread, new_snapshot([], [nn("n")]), LIST_ARGS)
    status = pl.filter(CycleState(), make_pod().obj(), pl.snapshot.node_infos[0])
    assert status.code == Code.ERROR
