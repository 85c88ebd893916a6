"""Port of kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go
(TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes, TestPreFilterDisabled,
TestPreFilterStateAddRemovePod, TestGetTPMapMatchingIncomingAffinityAntiAffinity).

Not ported: the two "fails PreFilter with an invalid (anti)affinity label syntax" cases (the API server rejects
such pods, so a snapshot never holds one) and TestPreFilterStateClone (Go deep-copy mechanics).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import Code, CycleState, Status
from kdiagnose.scheduler.plugins.interpodaffinity.filtering import PRE_FILTER_STATE_KEY, PreFilterState
from kdiagnose.scheduler.plugins.interpodaffinity.plugin import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    InterPodAffinity,
)
from tests.upstream.builders import (
    PodWrapper,
    make_node,
    make_pod,
    new_plugin,
    new_snapshot,
)

Obj = dict[str, Any]

OK: tuple[Code, tuple[str, ...]] = (Code.SUCCESS, ())
AFF_UU = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,))
ANTI_U = (Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,))
EXISTING_U = (Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,))

# The Namespaces SetupPluginWithInformers receives in interpodaffinity's tests (`namespaces`).
NAMESPACES = [
    {"metadata": {"name": "subteam1.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam2.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam1.team2", "labels": {"team": "team2"}}},
    {"metadata": {"name": "subteam2.team2", "labels": {"team": "team2"}}},
]

SERVICE_SECURITYSCAN = {"service": "securityscan"}
SECURITY_S1 = {"security": "S1"}


def expr(key: str, op: str, values: list[str] | None = None) -> Obj:
    e: Obj = {"key": key, "operator": op}
    if values is not None:
        e["values"] = values
    return e


def sel(*exprs: Obj) -> Obj:
    return {"matchExpressions": list(exprs)}


# st.PodWrapper.PodAffinityIn/NotIn/Exists and the anti-affinity variants (required terms).
def aff_in(w: PodWrapper, key: str, topo: str, values: list[str]) -> PodWrapper:
    return w.pod_affinity(topo, sel(expr(key, "In", values)))


def aff_not_in(w: PodWrapper, key: str, topo: str, values: list[str]) -> PodWrapper:
    return w.pod_affinity(topo, sel(expr(key, "NotIn", values)))


def aff_exists(w: PodWrapper, key: str, topo: str) -> PodWrapper:
    return w.pod_affinity(topo, sel(expr(key, "Exists")))


def anti_in(w: PodWrapper, key: str, topo: str, values: list[str]) -> PodWrapper:
    return w.pod_anti_affinity(topo, sel(expr(key, "In", values)))


def anti_not_in(w: PodWrapper, key: str, topo: str, values: list[str]) -> PodWrapper:
    return w.pod_anti_affinity(topo, sel(expr(key, "NotIn", values)))


def anti_exists(w: PodWrapper, key: str, topo: str) -> PodWrapper:
    return w.pod_anti_affinity(topo, sel(expr(key, "Exists")))


def pw(labels: dict[str, str] | None = None, ns: str | None = None, node: str | None = None) -> PodWrapper:
    w = make_pod().name("p" if node is None else f"e-{node}")
    if labels:
        w.labels(labels)
    if ns:
        w.namespace(ns)
    if node:
        w.node(node)
    return w


_counter = [0]


def ex(labels: dict[str, str] | None = None, node: str = "node1", ns: str | None = None) -> PodWrapper:
    """An existing pod with a unique name (upstream's test pods are nameless)."""
    _counter[0] += 1
    w = make_pod().name(f"existing-{_counter[0]}").node(node)
    if labels:
        w.labels(labels)
    if ns:
        w.namespace(ns)
    return w


def mknode(name: str, labels: dict[str, str]) -> Node:
    w = make_node().name(name)
    for k, v in labels.items():
        w.label(k, v)
    return w.obj()


NODE1 = {"region": "r1", "zone": "z11"}


def existing_service(node: str = "node1") -> Pod:
    """st.MakePod().Labels(podLabel).Node("node1")."""
    return ex(SERVICE_SECURITYSCAN, node).obj()


def verdict(s: Status) -> tuple[Code, tuple[str, ...]]:
    return (s.code, tuple(s.reasons))


# ----------------------------------------------------------------------------------- TestRequiredAffinitySingleNode

SINGLE_NODE_CASES = [
    pytest.param(
        make_pod().name("p").obj(),
        [],
        "skip",
        id="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
    ),
    pytest.param(
        aff_in(pw(SECURITY_S1), "service", "region", ["securityscan", "value2"]).obj(),
        [existing_service()],
        OK,
        id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator "
        "that matches the existing pod",
    ),
    pytest.param(
        aff_not_in(pw(SECURITY_S1), "service", "region", ["securityscan3", "value3"]).obj(),
        [existing_service()],
        OK,
        id="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in "
        "operator in labelSelector that matches the existing pod",
    ),
    pytest.param(
        pw(SECURITY_S1)
        .pod_affinity(
            "", sel(expr("service", "In", ["securityscan", "value2"])), namespaces=["DiffNameSpace"]
        )
        .obj(),
        [ex(SERVICE_SECURITYSCAN, ns="ns").obj()],
        AFF_UU,
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
    ),
    pytest.param(
        aff_in(pw(SERVICE_SECURITYSCAN), "service", "", ["antivirusscan", "value2"]).obj(),
        [existing_service()],
        AFF_UU,
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
    ),
    pytest.param(
        pw(SECURITY_S1)
        .pod_affinity("region", sel(expr("service", "Exists"), expr("wrongkey", "DoesNotExist")))
        .pod_affinity(
            "region", sel(expr("service", "In", ["securityscan"]), expr("service", "NotIn", ["WrongValue"]))
        )
        .obj(),
        [existing_service()],
        OK,
        id="satisfies the PodAffinity with different label Operators in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution ",
    ),
    pytest.param(
        pw(SECURITY_S1)
        .pod_affinity("region", sel(expr("service", "Exists"), expr("wrongkey", "DoesNotExist")))
        .pod_affinity(
            "region", sel(expr("service", "In", ["securityscan2"]), expr("service", "NotIn", ["WrongValue"]))
        )
        .obj(),
        [existing_service()],
        AFF_UU,
        id="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto "
        "the node because one of the matchExpression item don't match.",
    ),
    pytest.param(
        anti_in(
            aff_in(pw(SECURITY_S1), "service", "region", ["securityscan", "value2"]),
            "service",
            "node",
            ["antivirusscan", "value2"],
        ).obj(),
        [existing_service()],
        OK,
        id="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        anti_in(
            aff_in(pw(SECURITY_S1), "service", "region", ["securityscan", "value2"]),
            "service",
            "node",
            ["antivirusscan", "value2"],
        ).obj(),
        [anti_in(ex(SERVICE_SECURITYSCAN), "service", "node", ["antivirusscan", "value2"]).obj()],
        OK,
        id="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        anti_in(
            aff_in(pw(SECURITY_S1), "service", "region", ["securityscan", "value2"]),
            "service",
            "zone",
            ["securityscan", "value2"],
        ).obj(),
        [existing_service()],
        ANTI_U,
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        anti_in(
            aff_in(pw(SERVICE_SECURITYSCAN), "service", "region", ["securityscan", "value2"]),
            "service",
            "node",
            ["antivirusscan", "value2"],
        ).obj(),
        [anti_in(ex(SERVICE_SECURITYSCAN), "service", "zone", ["securityscan", "value2"]).obj()],
        EXISTING_U,
        id="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
        "existing pod",
    ),
    pytest.param(
        aff_not_in(pw(SERVICE_SECURITYSCAN), "service", "region", ["securityscan", "value2"]).obj(),
        [existing_service("node2")],
        AFF_UU,
        id="pod matches its own Label in PodAffinity and that matches the existing pod Labels",
    ),
    pytest.param(
        pw(SERVICE_SECURITYSCAN).obj(),
        [anti_in(ex(SERVICE_SECURITYSCAN), "service", "zone", ["securityscan", "value2"]).obj()],
        EXISTING_U,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "doesn't satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        pw(SERVICE_SECURITYSCAN).obj(),
        [anti_not_in(ex(SERVICE_SECURITYSCAN), "service", "zone", ["securityscan", "value2"]).obj()],
        "skip",
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        anti_exists(anti_exists(pw(SERVICE_SECURITYSCAN), "service", "region"), "security", "region").obj(),
        [anti_exists(ex(SECURITY_S1), "security", "zone").obj()],
        ANTI_U,
        id="satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
        "incoming pod",
    ),
    pytest.param(
        anti_exists(anti_exists(pw(SERVICE_SECURITYSCAN), "service", "zone"), "security", "zone").obj(),
        [anti_exists(ex(SECURITY_S1), "security", "zone").obj()],
        ANTI_U,
        id="PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        anti_exists(pw(SECURITY_S1), "security", "zone").obj(),
        [anti_exists(anti_exists(ex(SERVICE_SECURITYSCAN), "service", "zone"), "security", "zone").obj()],
        EXISTING_U,
        id="PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        anti_exists(anti_exists(pw({"abc": "", "xyz": ""}), "abc", "zone"), "def", "zone").obj(),
        [anti_exists(anti_exists(ex({"def": "", "xyz": ""}), "abc", "zone"), "def", "zone").obj()],
        ANTI_U,
        id="PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        anti_exists(anti_exists(pw({"def": "", "xyz": ""}), "abc", "zone"), "def", "zone").obj(),
        [anti_exists(anti_exists(ex({"abc": "", "xyz": ""}), "abc", "zone"), "def", "zone").obj()],
        ANTI_U,
        id="PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        pw(SECURITY_S1)
        .pod_affinity(
            "region",
            sel(expr("service", "In", ["securityscan", "value2"])),
            ns_selector=sel(expr("team", "In", ["team1"])),
        )
        .obj(),
        [ex(SERVICE_SECURITYSCAN, ns="subteam1.team1").obj()],
        OK,
        id="affinity with NamespaceSelector",
    ),
    pytest.param(
        pw(SECURITY_S1)
        .pod_affinity(
            "region",
            sel(expr("service", "In", ["securityscan", "value2"])),
            ns_selector=sel(expr("team", "In", ["team1"])),
        )
        .obj(),
        [ex(SERVICE_SECURITYSCAN, ns="subteam1.team2").obj()],
        AFF_UU,
        id="affinity with non-matching NamespaceSelector",
    ),
    pytest.param(
        pw(SECURITY_S1, ns="subteam1.team1")
        .pod_anti_affinity(
            "zone",
            sel(expr("service", "In", ["securityscan", "value2"])),
            ns_selector=sel(expr("team", "In", ["team1"])),
        )
        .obj(),
        [ex(SERVICE_SECURITYSCAN, ns="subteam2.team1").obj()],
        ANTI_U,
        id="anti-affinity with matching NamespaceSelector",
    ),
    pytest.param(
        pw(SECURITY_S1, ns="subteam1.team1")
        .pod_anti_affinity("zone", sel(expr("service", "In", ["securityscan", "value2"])), ns_selector={})
        .obj(),
        [ex(SERVICE_SECURITYSCAN, ns="subteam2.team1").obj()],
        ANTI_U,
        id="anti-affinity with matching all NamespaceSelector",
    ),
    pytest.param(
        pw(SECURITY_S1, ns="subteam1.team1")
        .pod_anti_affinity(
            "zone",
            sel(expr("service", "In", ["securityscan", "value2"])),
            ns_selector=sel(expr("team", "In", ["team1"])),
        )
        .obj(),
        [ex(SERVICE_SECURITYSCAN, ns="subteam1.team2").obj()],
        OK,
        id="anti-affinity with non-matching NamespaceSelector",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), SINGLE_NODE_CASES)
def test_required_affinity_single_node(pod: Pod, existing: list[Pod], want: Any) -> None:
    snap = new_snapshot(existing, [mknode("node1", NODE1)], {"Namespace": NAMESPACES})
    pl = new_plugin(InterPodAffinity, snap)
    state = CycleState()
    _, pre = pl.pre_filter(state, pod)
    if want == "skip":
        assert pre.code == Code.SKIP
        return
    assert pre.code == Code.SUCCESS
    assert verdict(pl.filter(state, pod, snap.node_info_by_name["node1"])) == want


# -------------------------------------------------------------------------------- TestRequiredAffinityMultipleNodes

RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def hosts3(z: tuple[str, str, str] = ("z1", "z1", "z1")) -> list[Node]:
    return [
        mknode("nodeA", {"region": "r1", "zone": z[0], "hostname": "nodeA"}),
        mknode("nodeB", {"region": "r1", "zone": z[1], "hostname": "nodeB"}),
    ]


MULTI_NODE_CASES = [
    pytest.param(
        aff_in(pw(), "foo", "region", ["bar"]).obj(),
        [ex({"foo": "bar"}, "node1").obj()],
        [mknode("node1", RG_CHINA), mknode("node2", RG_CHINA_AZ1), mknode("node3", RG_INDIA)],
        None,
        [OK, OK, AFF_UU],
        id="A pod can be scheduled onto all the nodes that have the same topology key & label value with one of "
        "them has an existing pod that matches the affinity rules",
    ),
    pytest.param(
        aff_in(
            aff_in(pw({"foo": "bar", "service": "securityscan"}), "foo", "zone", ["bar"]),
            "service",
            "zone",
            ["securityscan"],
        ).obj(),
        [ex({"foo": "bar"}, "nodeA").obj()],
        [
            mknode("nodeA", {"zone": "az1", "hostname": "h1"}),
            mknode("nodeB", {"zone": "az2", "hostname": "h2"}),
        ],
        None,
        [OK, OK],
        id="The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod "
        "of the collection should not be blocked from being scheduled onto any node, even there's no existing pod "
        "that matches the rule anywhere.",
    ),
    pytest.param(
        aff_in(
            aff_in(pw({"foo": "bar", "service": "securityscan"}), "foo", "zone", ["bar"]),
            "service",
            "zone",
            ["securityscan"],
        ).obj(),
        [ex({"foo": "bar"}, "nodeA").obj()],
        [
            mknode("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
            mknode("nodeB", {"zoneLabel": "az2", "hostname": "h2"}),
        ],
        None,
        [AFF_UU, AFF_UU],
        id="The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
    ),
    pytest.param(
        anti_in(pw(), "foo", "region", ["abc"]).obj(),
        [ex({"foo": "abc"}, "nodeA").obj()],
        [
            mknode("nodeA", {"region": "r1", "hostname": "nodeA"}),
            mknode("nodeB", {"region": "r1", "hostname": "nodeB"}),
        ],
        None,
        [ANTI_U, ANTI_U],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
    ),
    pytest.param(
        anti_in(anti_in(pw(), "foo", "region", ["abc"]), "service", "zone", ["securityscan"]).obj(),
        [ex({"foo": "abc", "service": "securityscan"}, "nodeA").obj()],
        [
            mknode("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
            mknode("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"}),
        ],
        None,
        [ANTI_U, ANTI_U],
        id="This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
    ),
    pytest.param(
        anti_in(pw(), "foo", "region", ["abc"]).obj(),
        [ex({"foo": "abc"}, "nodeA").obj()],
        [mknode("nodeA", RG_CHINA), mknode("nodeB", RG_CHINA_AZ1), mknode("nodeC", RG_INDIA)],
        None,
        [ANTI_U, ANTI_U, OK],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
    ),
    pytest.param(
        anti_in(pw({"foo": "123"}, ns="NS1"), "foo", "region", ["bar"]).obj(),
        [
            ex({"foo": "bar"}, "nodeA", ns="NS1").obj(),
            anti_in(ex(None, "nodeC", ns="NS2"), "foo", "region", ["123"]).obj(),
        ],
        [mknode("nodeA", RG_CHINA), mknode("nodeB", RG_CHINA_AZ1), mknode("nodeC", RG_INDIA)],
        None,
        [ANTI_U, ANTI_U, OK],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC "
        "has an existing pod that match the inter pod affinity rule but in different namespace)",
    ),
    pytest.param(
        pw({"foo": ""}).obj(),
        [anti_exists(ex(None, "nodeA"), "foo", "invalid-node-label").obj()],
        hosts3(),
        "skip",
        [OK, OK],
        id="Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, "
        "labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
    ),
    pytest.param(
        anti_exists(pw(None, node="nodeA"), "foo", "invalid-node-label").obj(),
        [ex({"foo": ""}, "nodeA").obj()],
        hosts3(),
        None,
        [OK, OK],
        id="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
    ),
    pytest.param(
        pw({"foo": "", "bar": ""}).obj(),
        [
            anti_exists(ex(None, "nodeA"), "foo", "zone").obj(),
            anti_exists(ex(None, "nodeA"), "bar", "region").obj(),
        ],
        hosts3(("z1", "z2", "")),
        None,
        [EXISTING_U, EXISTING_U],
        id="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
        "existingPod's terms on all nodes",
    ),
    pytest.param(
        anti_exists(anti_exists(pw(), "foo", "zone"), "bar", "region").obj(),
        [ex({"foo": ""}, "nodeA").obj(), ex({"bar": ""}, "nodeB").obj()],
        hosts3(("z1", "z2", "")),
        None,
        [ANTI_U, ANTI_U],
        id="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates "
        "one anti-affinity rule of existingPod",
    ),
    pytest.param(
        pw({"foo": "", "bar": ""}).obj(),
        [anti_exists(anti_exists(ex(None, "nodeA"), "foo", "invalid-node-label"), "bar", "zone").obj()],
        hosts3(("z1", "z2", "")),
        None,
        [EXISTING_U, OK],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as "
        "a single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        anti_exists(anti_exists(pw(), "foo", "invalid-node-label"), "bar", "zone").obj(),
        [ex({"foo": "", "bar": ""}, "nodeA").obj()],
        hosts3(("z1", "z2", "")),
        None,
        [ANTI_U, OK],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as "
        "a single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        pw({"foo": "", "bar": ""}).obj(),
        [anti_exists(anti_exists(ex(None, "nodeA"), "foo", "region"), "bar", "zone").obj()],
        hosts3(("z1", "z2", "")),
        None,
        [EXISTING_U, EXISTING_U],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as "
        "a single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        anti_exists(anti_exists(pw(), "foo", "region"), "bar", "zone").obj(),
        [ex({"foo": "", "bar": ""}, "nodeA").obj()],
        hosts3(("z1", "z2", "")),
        None,
        [ANTI_U, ANTI_U],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as "
        "a single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        pw({"foo": "", "bar": ""}).obj(),
        [
            anti_exists(anti_exists(ex(None, "nodeA"), "foo", "zone"), "labelA", "zone").obj(),
            anti_exists(anti_exists(ex(None, "nodeB"), "bar", "zone"), "labelB", "zone").obj(),
        ],
        [*hosts3(("z1", "z2", "")), mknode("nodeC", {"region": "r1", "zone": "z3", "hostname": "nodeC"})],
        None,
        [EXISTING_U, EXISTING_U, OK],
        id="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term "
        "matches incoming pod, so incoming pod can only be scheduled to nodeC",
    ),
    pytest.param(
        aff_exists(aff_exists(pw(), "foo", "region"), "bar", "zone").obj(),
        [ex({"foo": "", "bar": ""}, "nodeA").obj()],
        hosts3(),
        None,
        [OK, OK],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match",
    ),
    pytest.param(
        aff_exists(aff_exists(pw(), "foo", "region"), "bar", "zone").obj(),
        [ex({"foo": ""}, "nodeA").obj(), ex({"bar": ""}, "nodeB").obj()],
        hosts3(("z1", "z2", "")),
        None,
        [AFF_UU, AFF_UU],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match, and the match logic should be satisfied on the same pod",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "nodes", "want_pre", "want"), MULTI_NODE_CASES)
def test_required_affinity_multiple_nodes(
    pod: Pod, existing: list[Pod], nodes: list[Node], want_pre: str | None, want: list[Any]
) -> None:
    snap = new_snapshot(existing, nodes, {"Namespace": [{"metadata": {"name": "NS1"}}]})
    pl = new_plugin(InterPodAffinity, snap)
    state = CycleState()
    _, pre = pl.pre_filter(state, pod)
    if want_pre == "skip":
        assert pre.code == Code.SKIP
        return
    assert pre.code == Code.SUCCESS
    got = [verdict(pl.filter(state, pod, snap.node_info_by_name[n.name])) for n in nodes]
    assert got == want


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter state is an Error naming the state key."""
    snap = new_snapshot([], [mknode("n", {})])
    pl = new_plugin(InterPodAffinity, snap)
    status = pl.filter(CycleState(), make_pod().obj(), snap.node_infos[0])
    assert status.code == Code.ERROR
    assert status.reasons == ('error reading "PreFilterInterPodAffinity" from cycleState: not found',)


# ------------------------------------------------------------------------------------ TestPreFilterStateAddRemovePod

LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
FOO_BAR = {"foo": "bar"}


def anti_foo_bar(w: PodWrapper) -> PodWrapper:
    return w.pod_anti_affinity("region", sel(expr("foo", "In", ["bar"])))


def anti_complex(w: PodWrapper) -> PodWrapper:
    return w.pod_anti_affinity("region", sel(expr("foo", "In", ["bar", "buzz"]))).pod_anti_affinity(
        "zone", sel(expr("service", "NotIn", ["bar", "security", "test"]))
    )


def affinity_complex(w: PodWrapper) -> PodWrapper:
    return w.pod_affinity("region", sel(expr("foo", "In", ["bar", "buzz"]))).pod_affinity(
        "zone", sel(expr("service", "NotIn", ["bar", "security", "test"]))
    )


def named(name: str, labels: dict[str, str] | None = None, node: str | None = None) -> PodWrapper:
    w = make_pod().name(name)
    if labels:
        w.labels(labels)
    if node:
        w.node(node)
    return w


ADD_REMOVE_CASES = [
    pytest.param(
        anti_foo_bar(named("pending", FOO_BAR)).obj(),
        anti_foo_bar(named("addedPod", FOO_BAR, "nodeB")).obj(),
        [named("p1", FOO_BAR, "nodeA").obj(), anti_foo_bar(named("p2", None, "nodeC")).obj()],
        {("region", "r1"): 2},
        {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
    ),
    pytest.param(
        anti_complex(named("pending", FOO_BAR)).obj(),
        anti_complex(named("addedPod", FOO_BAR, "nodeA")).obj(),
        [named("p1", FOO_BAR, "nodeA").obj(), anti_foo_bar(named("p2", None, "nodeC")).obj()],
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod (complex)",
    ),
    pytest.param(
        affinity_complex(named("pending", FOO_BAR)).obj(),
        anti_complex(named("addedPod", FOO_BAR, "nodeA")).obj(),
        [
            named("p1", FOO_BAR, "nodeA").obj(),
            affinity_complex(anti_foo_bar(named("p2", None, "nodeC"))).obj(),
        ],
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
        id="preFilterState matching pod affinity and anti-affinity are updated correctly after adding and "
        "removing a pod",
    ),
]

NODES_ABC = [mknode("nodeA", LABEL1), mknode("nodeB", LABEL2), mknode("nodeC", LABEL3)]


def _state_for(pods: list[Pod], pending: Pod) -> tuple[InterPodAffinity, CycleState, PreFilterState]:
    snap = new_snapshot(pods, NODES_ABC)
    pl = new_plugin(InterPodAffinity, snap)
    assert isinstance(pl, InterPodAffinity)
    state = CycleState()
    _, pre = pl.pre_filter(state, pending)
    assert pre.code == Code.SUCCESS
    s = state.read(PRE_FILTER_STATE_KEY)
    assert isinstance(s, PreFilterState)
    return pl, state, s


def _counts(s: PreFilterState) -> tuple[dict[Any, int], dict[Any, int], dict[Any, int]]:
    return (
        dict(s.existing_anti_counts.counts),
        dict(s.affinity_counts.counts),
        dict(s.anti_counts.counts),
    )


@pytest.mark.parametrize(("pending", "added", "existing", "want_anti", "want_aff"), ADD_REMOVE_CASES)
def test_pre_filter_state_add_remove_pod(
    pending: Pod,
    added: Pod,
    existing: list[Pod],
    want_anti: dict[tuple[str, str], int],
    want_aff: dict[tuple[str, str], int],
) -> None:
    # The state PreFilter computes with the added pod already bound ...
    _, _, all_pods = _state_for([*existing, added], pending)
    # ... equals the state without it plus AddPod; RemovePod restores the original.
    pl, state, s = _state_for(existing, pending)
    original = _counts(s)
    node_info = pl.snapshot.node_info_by_name[added.node_name]
    assert pl.add_pod(state, pending, added, node_info).code == Code.SUCCESS
    assert dict(s.anti_counts.counts) == want_anti
    assert dict(s.affinity_counts.counts) == want_aff
    assert _counts(s) == _counts(all_pods)
    assert pl.remove_pod(state, pending, added, node_info).code == Code.SUCCESS
    assert _counts(s) == original


# ------------------------------------------------------------------------ TestGetTPMapMatchingIncomingAffinityAntiAffinity


def normal(*labels: str) -> Pod:
    w = make_pod().name("normal").node("nodeA")
    for k in labels:
        w.label(k, "")
    return w.obj()


HOST_A = [mknode("nodeA", {"hostname": "nodeA"})]

INCOMING_CASES = [
    pytest.param([], make_pod().name("aaa-normal").obj(), {}, {}, id="nil test"),
    pytest.param(
        [normal("aaa")],
        make_pod().name("aaa-normal").obj(),
        {},
        {},
        id="incoming pod without affinity/anti-affinity causes a no-op",
    ),
    pytest.param(
        [normal("bbb")],
        anti_exists(aff_exists(make_pod().name("aaa-anti"), "aaa", "hostname"), "aaa", "hostname").obj(),
        {},
        {},
        id="no pod has label that violates incoming pod's affinity and anti-affinity",
    ),
    pytest.param(
        [normal("aaa")],
        anti_exists(aff_exists(make_pod().name("affi-antiaffi"), "aaa", "hostname"), "aaa", "hostname").obj(),
        {("hostname", "nodeA"): 1},
        {("hostname", "nodeA"): 1},
        id="existing pod matches incoming pod's affinity and anti-affinity - single term case",
    ),
    pytest.param(
        [normal("aaa", "bbb")],
        anti_exists(
            aff_exists(aff_exists(make_pod().name("affi-antiaffi"), "aaa", "hostname"), "bbb", "hostname"),
            "aaa",
            "hostname",
        ).obj(),
        {("hostname", "nodeA"): 2},
        {("hostname", "nodeA"): 1},
        id="existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
    ),
    pytest.param(
        [normal("aaa")],
        anti_exists(
            anti_exists(
                aff_exists(
                    aff_exists(make_pod().name("affi-antiaffi"), "aaa", "hostname"), "bbb", "hostname"
                ),
                "aaa",
                "hostname",
            ),
            "bbb",
            "hostname",
        ).obj(),
        {},
        {("hostname", "nodeA"): 1},
        id="existing pod not match incoming pod's affinity but matches anti-affinity",
    ),
    pytest.param(
        [normal("aaa", "bbb")],
        anti_exists(
            anti_exists(
                aff_exists(
                    aff_exists(make_pod().name("anaffi-antiaffiti"), "aaa", "hostname"), "ccc", "hostname"
                ),
                "aaa",
                "hostname",
            ),
            "ccc",
            "hostname",
        ).obj(),
        {},
        {("hostname", "nodeA"): 1},
        id="incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
    ),
    pytest.param(
        [normal("bbb")],
        anti_exists(
            anti_exists(
                aff_exists(
                    aff_exists(make_pod().name("affi-antiaffi"), "aaa", "hostname"), "bbb", "hostname"
                ),
                "aaa",
                "hostname",
            ),
            "bbb",
            "hostname",
        ).obj(),
        {},
        {("hostname", "nodeA"): 1},
        id="incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
    ),
]


@pytest.mark.parametrize(("existing", "pod", "want_aff", "want_anti"), INCOMING_CASES)
def test_incoming_affinity_anti_affinity_counts(
    existing: list[Pod], pod: Pod, want_aff: dict[tuple[str, str], int], want_anti: dict[tuple[str, str], int]
) -> None:
    pl = new_plugin(InterPodAffinity, new_snapshot(existing, HOST_A))
    state = CycleState()
    _, pre = pl.pre_filter(state, pod)
    if pre.code == Code.SKIP:
        assert want_aff == {} and want_anti == {}
        return
    s = state.read(PRE_FILTER_STATE_KEY)
    assert isinstance(s, PreFilterState)
    assert dict(s.affinity_counts.counts) == want_aff
    assert dict(s.anti_counts.counts) == want_anti
