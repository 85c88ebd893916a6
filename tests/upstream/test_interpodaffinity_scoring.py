"""Port of kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go
(TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight).

Not ported: "invalid (Anti)Affinity fails PreScore" (label values the API server rejects). Upstream's test pods
live in namespace ""; here that namespace is "default" (also inside `namespaces` lists).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import MAX_NODE_SCORE, Code, CycleState
from kdiagnose.scheduler.plugins.interpodaffinity.plugin import InterPodAffinity
from tests.upstream.builders import make_node, make_pod, new_plugin, new_snapshot

Obj = dict[str, Any]
MAX = MAX_NODE_SCORE

NAMESPACES = [
    {"metadata": {"name": "subteam1.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam2.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam1.team2", "labels": {"team": "team2"}}},
    {"metadata": {"name": "subteam2.team2", "labels": {"team": "team2"}}},
]

RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}


def expr(key: str, op: str, values: list[str] | None = None) -> Obj:
    e: Obj = {"key": key, "operator": op}
    if values is not None:
        e["values"] = values
    return e


def term(topo: str, *exprs: Obj, **extra: Any) -> Obj:
    return {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": topo, **extra}


def weighted(weight: int, t: Obj) -> Obj:
    return {"weight": weight, "podAffinityTerm": t}


def preferred(kind: str, *terms: Obj) -> Obj:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


TEAM1 = {"matchExpressions": [expr("team", "In", ["team1"])]}

STAY_WITH_S1_IN_REGION = preferred("podAffinity", weighted(5, term("region", expr("security", "In", ["S1"]))))
STAY_WITH_S2_IN_REGION = preferred("podAffinity", weighted(6, term("region", expr("security", "In", ["S2"]))))
AFFINITY3 = preferred(
    "podAffinity",
    weighted(8, term("region", expr("security", "NotIn", ["S1"]), expr("security", "In", ["S2"]))),
    weighted(2, term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist"))),
)
HARD_AFFINITY = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            term("region", expr("security", "In", ["S1", "value2"])),
            term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist")),
        ]
    }
}
AWAY_FROM_S1_IN_AZ = preferred("podAntiAffinity", weighted(5, term("az", expr("security", "In", ["S1"]))))
AWAY_FROM_S2_IN_AZ = preferred("podAntiAffinity", weighted(5, term("az", expr("security", "In", ["S2"]))))
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = {
    **preferred("podAffinity", weighted(8, term("region", expr("security", "In", ["S1"])))),
    **preferred("podAntiAffinity", weighted(5, term("az", expr("security", "In", ["S2"])))),
}
NS_TERM = term(
    "region", expr("security", "In", ["S1"]), namespaces=["subteam2.team2"], namespaceSelector=TEAM1
)
AFFINITY_NAMESPACE_SELECTOR = preferred("podAffinity", weighted(5, NS_TERM))
ANTI_AFFINITY_NAMESPACE_SELECTOR = preferred("podAntiAffinity", weighted(5, NS_TERM))

_n = [0]


def pod(
    node: str = "", labels: dict[str, str] | None = None, affinity: Obj | None = None, ns: str | None = None
) -> Pod:
    _n[0] += 1
    w = make_pod().name(f"pod-{_n[0]}")
    if node:
        w.node(node)
    if labels:
        w.labels(labels)
    if ns:
        w.namespace(ns)
    raw = w.raw()
    if affinity:
        raw["spec"]["affinity"] = affinity
    return Pod(raw)


def node(name: str, labels: dict[str, str]) -> Node:
    w = make_node().name(name)
    for k, v in labels.items():
        w.label(k, v)
    return w.obj()


def n3(a: dict[str, str], b: dict[str, str], c: dict[str, str]) -> list[Node]:
    return [node("node1", a), node("node2", b), node("node3", c)]


PREFERRED_CASES = [
    pytest.param(
        pod(labels=S1),
        [],
        n3(RG_CHINA, RG_INDIA, AZ1),
        False,
        "skip",
        id="all nodes are same priority as Affinity is nil",
    ),
    pytest.param(
        pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION),
        [pod("node1", S1), pod("node2", S2), pod("node3", S1)],
        n3(RG_CHINA, RG_INDIA, AZ1),
        False,
        [MAX, 0, 0],
        id="Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
        "which doesn't match either pods in nodes or in topology key",
    ),
    pytest.param(
        pod(affinity=STAY_WITH_S1_IN_REGION),
        [pod("node1", S1)],
        n3(RG_CHINA, RG_CHINA_AZ1, RG_INDIA),
        False,
        [MAX, MAX, 0],
        id="All the nodes that have the same topology key & label value with one of them has an existing pod that "
        "match the affinity rules, have the same score",
    ),
    pytest.param(
        pod(labels=S1, affinity=STAY_WITH_S2_IN_REGION),
        [
            pod("node1", S2),
            pod("node1", S2),
            pod("node2", S2),
            pod("node3", S2),
            pod("node4", S2),
            pod("node5", S2),
        ],
        [*n3(RG_CHINA, RG_INDIA, RG_CHINA), node("node4", RG_CHINA), node("node5", RG_INDIA)],
        False,
        [MAX, 0, MAX, MAX, 0],
        id="Affinity: nodes in one region has more matching pods comparing to other region, so the region which "
        "has more matches will get high score",
    ),
    pytest.param(
        pod(labels=S1, affinity=AFFINITY3),
        [pod("node1", S1), pod("node2", S2), pod("node3", S1)],
        n3(RG_CHINA, RG_INDIA, AZ1),
        False,
        [20, MAX, 0],
        id="Affinity: different Label operators and values for pod affinity scheduling preference, including some "
        "match failures ",
    ),
    pytest.param(
        pod(labels=S2),
        [pod("node1", S1, STAY_WITH_S1_IN_REGION), pod("node2", S2, STAY_WITH_S2_IN_REGION)],
        n3(RG_CHINA, RG_INDIA, AZ1),
        False,
        [0, MAX, 0],
        id="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
        "symmetry",
    ),
    pytest.param(
        pod(labels=S1, ns="subteam1.team1"),
        [pod("node1", S1, AFFINITY_NAMESPACE_SELECTOR), pod("node2", S2, STAY_WITH_S2_IN_REGION)],
        n3(RG_CHINA, RG_INDIA, AZ1),
        False,
        [MAX, 0, 0],
        id="Affinity symmetry with namespace selector",
    ),
    pytest.param(
        pod(labels=S1, ns="subteam1.team1"),
        [pod("node1", S1, ANTI_AFFINITY_NAMESPACE_SELECTOR), pod("node2", S2, STAY_WITH_S2_IN_REGION)],
        n3(RG_CHINA, RG_INDIA, AZ1),
        False,
        [0, MAX, MAX],
        id="AntiAffinity symmetry with namespace selector",
    ),
    pytest.param(
        pod(labels=S1),
        [pod("node1", S1, HARD_AFFINITY), pod("node2", S2, HARD_AFFINITY)],
        n3(RG_CHINA, RG_INDIA, AZ1),
        False,
        [MAX, MAX, 0],
        id="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
        [pod("node1", S1), pod("node2", S2)],
        [node("node1", AZ1), node("node2", RG_CHINA)],
        False,
        [0, MAX],
        id="Anti Affinity: pod that does not match existing pods in node will get high score ",
    ),
    pytest.param(
        pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
        [pod("node1", S1), pod("node2", S1)],
        [node("node1", AZ1), node("node2", RG_CHINA)],
        False,
        [0, MAX],
        id="Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
        "comparing to others ",
    ),
    pytest.param(
        pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
        [pod("node1", S1), pod("node1", S1), pod("node2", S2)],
        [node("node1", AZ1), node("node2", RG_INDIA)],
        False,
        [0, MAX],
        id="Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
        "unmatches will get high score",
    ),
    pytest.param(
        pod(labels=S2),
        [pod("node1", S1, AWAY_FROM_S2_IN_AZ), pod("node2", S2, AWAY_FROM_S1_IN_AZ)],
        [node("node1", AZ1), node("node2", AZ2)],
        False,
        [0, MAX],
        id="Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
    ),
    pytest.param(
        pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [pod("node1", S1), pod("node2", S1)],
        [node("node1", RG_CHINA), node("node2", AZ1)],
        False,
        [MAX, 0],
        id="Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
        "affinity & anti affinity",
    ),
    pytest.param(
        pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [
            pod("node1", S1),
            pod("node1", S1),
            pod("node2", S1),
            pod("node3", S1),
            pod("node3", S1),
            pod("node4", S1),
            pod("node5", S1),
        ],
        [*n3(RG_CHINA_AZ1, RG_INDIA, RG_CHINA), node("node4", RG_CHINA), node("node5", RG_INDIA)],
        False,
        [MAX, 0, MAX, MAX, 0],
        id="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and "
        "existing pods have the same labels",
    ),
    pytest.param(
        pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [
            pod("node1", S1),
            pod("node2", S2),
            pod("node3", None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            pod("node4", None, AWAY_FROM_S1_IN_AZ),
        ],
        [*n3(RG_CHINA, AZ1, RG_INDIA), node("node4", AZ2)],
        False,
        [MAX, 0, MAX, 0],
        id="Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution "
        "in both pod affinity & anti affinity & symmetry",
    ),
    pytest.param(
        pod(labels=S1),
        [pod("node1", S1), pod("node2", None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)],
        [node("node1", RG_CHINA), node("node2", RG_CHINA)],
        False,
        [0, 0],
        id="Avoid panic when partial nodes in a topology don't have pods with affinity",
    ),
    pytest.param(
        pod(labels=S1, affinity=AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
        [
            pod("node1", S1, ns="subteam1.team1"),
            pod("node1", S1, ns="subteam1.team1"),
            pod("node1", S1, ns="subteam1.team2"),
            pod("node2", S1, ns="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        False,
        [MAX, 0],
        id="Affinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        pod(labels=S1, affinity=AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
        [
            pod("node1", S1, ns="subteam1.team1"),
            pod("node1", S1, ns="subteam1.team1"),
            pod("node1", S1, ns="subteam2.team2"),
            pod("node2", S1, ns="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        False,
        [MAX, 0],
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    pytest.param(
        pod(labels=S1, affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
        [
            pod("node1", S1, ns="subteam1.team1"),
            pod("node1", S1, ns="subteam1.team1"),
            pod("node1", S1, ns="subteam1.team2"),
            pod("node2", S1, ns="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        False,
        [0, MAX],
        id="Affinity with pods matching NamespaceSelector (anti-affinity)",
    ),
    pytest.param(
        pod(labels=S1, affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
        [
            pod("node1", S1, ns="subteam1.team1"),
            pod("node1", S1, ns="subteam1.team1"),
            pod("node1", S1, ns="subteam2.team2"),
            pod("node2", S1, ns="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        False,
        [0, MAX],
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity)",
    ),
    pytest.param(
        pod(labels=S2),
        [
            pod("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            pod("node2", S2, STAY_WITH_S2_IN_REGION),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        True,
        "skip",
        id="Ignore preferred terms of existing pods",
    ),
    pytest.param(
        pod(labels=S2),
        [
            pod("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            pod("node2", S2, STAY_WITH_S2_IN_REGION),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        False,
        [0, MAX],
        id="Do not ignore preferred terms of existing pods",
    ),
    pytest.param(pod(labels=S2), [], [], False, "skip", id="No nodes to score"),
]


def _scores(pl: InterPodAffinity, p: Pod, nodes: list[Node]) -> list[int] | str:
    state = CycleState()
    infos = [pl.snapshot.node_info_by_name[n.name] for n in nodes]
    status = pl.pre_score(state, p, infos)
    if status.code == Code.SKIP:
        return "skip"
    assert status.code == Code.SUCCESS
    raw: dict[str, int] = {}
    for ni in infos:
        s, st = pl.score(state, p, ni)
        assert st.code == Code.SUCCESS
        raw[ni.name] = s
    assert pl.normalize_score(state, p, raw).code == Code.SUCCESS
    return [raw[n.name] for n in nodes]


@pytest.mark.parametrize(("incoming", "existing", "nodes", "ignore", "want"), PREFERRED_CASES)
def test_preferred_affinity(
    incoming: Pod, existing: list[Pod], nodes: list[Node], ignore: bool, want: Any
) -> None:
    snap = new_snapshot(existing, nodes, {"Namespace": NAMESPACES})
    pl = new_plugin(
        InterPodAffinity,
        snap,
        {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore},
    )
    assert isinstance(pl, InterPodAffinity)
    assert _scores(pl, incoming, nodes) == want


HARD_POD_AFFINITY = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            term(
                "region",
                expr("service", "In", ["S1"]),
                namespaces=["default", "subteam2.team2"],
                namespaceSelector=TEAM1,
            )
        ]
    }
}
SERVICE_S1 = {"service": "S1"}


def hard_existing() -> list[Pod]:
    return [pod("node1", None, HARD_POD_AFFINITY), pod("node2", None, HARD_POD_AFFINITY)]


@pytest.mark.parametrize(
    ("incoming", "weight", "want"),
    [
        pytest.param(pod(labels=SERVICE_S1), 1, [MAX, MAX, 0], id="with default weight"),
        pytest.param(pod(labels=SERVICE_S1), 0, "skip", id="with zero weight"),
        pytest.param(pod(labels=SERVICE_S1, ns="subteam1.team2"), 1, "skip", id="with no matching namespace"),
        pytest.param(
            pod(labels=SERVICE_S1, ns="subteam1.team1"),
            1,
            [MAX, MAX, 0],
            id="with matching NamespaceSelector",
        ),
        pytest.param(
            pod(labels=SERVICE_S1, ns="subteam2.team2"), 1, [MAX, MAX, 0], id="with matching Namespaces"
        ),
    ],
)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    incoming: Pod, weight: int, want: Any
) -> None:
    nodes = n3(RG_CHINA, RG_INDIA, AZ1)
    snap = new_snapshot(hard_existing(), nodes, {"Namespace": NAMESPACES})
    pl = new_plugin(InterPodAffinity, snap, {"hardPodAffinityWeight": weight})
    assert isinstance(pl, InterPodAffinity)
    assert _scores(pl, incoming, nodes) == want
