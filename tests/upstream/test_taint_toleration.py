"""Port of upstream tainttoleration/taint_toleration_test.go (TestTaintTolerationScore,
TestTaintTolerationFilter, TestTaintTolerationFilterWithFeatureGate).

The Filter message is the v1.35 one (`node(s) had untolerated taint(s)`, as in the upstream test); the
v1.34.1 wording that names the taint is checked on the same table. Cases that enable the alpha
TaintTolerationComparisonOperators gate (Gt/Lt tolerations honoured) are skipped: the gate is off in every
release kdiagnose replays; the gate-off cases of the FeatureGate table are ported. Skipped as Go-only:
TestIsSchedulableAfterNodeChange, Test_isSchedulableAfterTargetPodTolerationChange (queueing hints).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import MAX_NODE_SCORE, Code, CycleState
from kdiagnose.scheduler.plugins.tainttoleration.taint_toleration import TaintToleration
from kdiagnose.versions import dialect_for
from tests.upstream.basic_builders import node_with_taints, pod_with_tolerations
from tests.upstream.builders import new_plugin, new_snapshot

Obj = dict[str, Any]
UNTOLERATED = "node(s) had untolerated taint(s)"


def _t(key: str, value: str, effect: str) -> Obj:
    return {"key": key, "value": value, "effect": effect}


def _tol(key: str, op: str, value: str, effect: str) -> Obj:
    d: Obj = {"key": key, "operator": op, "effect": effect}
    if value:
        d["value"] = value
    return d


PNS = "PreferNoSchedule"
NS = "NoSchedule"


@pytest.mark.parametrize(
    ("tolerations", "nodes", "expected"),
    [
        pytest.param(
            [_tol("foo", "Equal", "bar", PNS)],
            [("nodeA", [_t("foo", "bar", PNS)]), ("nodeB", [_t("foo", "blah", PNS)])],
            {"nodeA": MAX_NODE_SCORE, "nodeB": 0},
            id="node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
        ),
        pytest.param(
            [_tol("cpu-type", "Equal", "arm64", PNS), _tol("disk-type", "Equal", "ssd", PNS)],
            [
                ("nodeA", []),
                ("nodeB", [_t("cpu-type", "arm64", PNS)]),
                ("nodeC", [_t("cpu-type", "arm64", PNS), _t("disk-type", "ssd", PNS)]),
            ],
            {"nodeA": MAX_NODE_SCORE, "nodeB": MAX_NODE_SCORE, "nodeC": MAX_NODE_SCORE},
            id="the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many "
            "tolerable taints a node has",
        ),
        pytest.param(
            [_tol("foo", "Equal", "bar", PNS)],
            [
                ("nodeA", []),
                ("nodeB", [_t("cpu-type", "arm64", PNS)]),
                ("nodeC", [_t("cpu-type", "arm64", PNS), _t("disk-type", "ssd", PNS)]),
            ],
            {"nodeA": MAX_NODE_SCORE, "nodeB": 50, "nodeC": 0},
            id="the more intolerable taints a node has, the lower score it gets.",
        ),
        pytest.param(
            [_tol("cpu-type", "Equal", "arm64", NS), _tol("disk-type", "Equal", "ssd", NS)],
            [
                ("nodeA", []),
                ("nodeB", [_t("cpu-type", "arm64", NS)]),
                ("nodeC", [_t("cpu-type", "arm64", PNS), _t("disk-type", "ssd", PNS)]),
            ],
            {"nodeA": MAX_NODE_SCORE, "nodeB": MAX_NODE_SCORE, "nodeC": 0},
            id="only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations "
            "priority function",
        ),
        pytest.param(
            [],
            [("nodeA", []), ("nodeB", [_t("cpu-type", "arm64", PNS)])],
            {"nodeA": MAX_NODE_SCORE, "nodeB": 0},
            id="Default behaviour No taints and tolerations, lands on node with no taints",
        ),
    ],
)
def test_taint_toleration_score(
    tolerations: list[Obj], nodes: list[tuple[str, list[Obj]]], expected: dict[str, int]
) -> None:
    node_objs = [node_with_taints(n, t) for n, t in nodes]
    snap = new_snapshot(None, node_objs)
    pl = new_plugin(TaintToleration, snap)
    pod = pod_with_tolerations("pod1", tolerations)
    state = CycleState()
    assert pl.pre_score(state, pod, snap.node_infos).ok
    scores: dict[str, int] = {}
    for ni in snap.node_infos:
        s, st = pl.score(state, pod, ni)
        assert st.ok
        scores[ni.name] = s
    assert pl.normalize_score(state, pod, scores).ok
    assert scores == expected


FILTER_CASES = [
    pytest.param(
        [],
        [_t("dedicated", "user1", NS)],
        0,
        id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
    ),
    pytest.param(
        [{"key": "dedicated", "value": "user1", "effect": NS}],
        [_t("dedicated", "user1", NS)],
        None,
        id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
    ),
    pytest.param(
        [_tol("dedicated", "Equal", "user2", NS)],
        [_t("dedicated", "user1", NS)],
        0,
        id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
    ),
    pytest.param(
        [_tol("foo", "Exists", "", NS)],
        [_t("foo", "bar", NS)],
        None,
        id="A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints "
        "on the node",
    ),
    pytest.param(
        [_tol("dedicated", "Equal", "user2", NS), _tol("foo", "Exists", "", NS)],
        [_t("dedicated", "user2", NS), _t("foo", "bar", NS)],
        None,
        id="A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be "
        "scheduled onto the node",
    ),
    pytest.param(
        [_tol("foo", "Equal", "bar", PNS)],
        [_t("foo", "bar", NS)],
        0,
        id="A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect "
        "doesn't match, can't be scheduled onto the node",
    ),
    pytest.param(
        [{"key": "foo", "operator": "Equal", "value": "bar"}],
        [_t("foo", "bar", NS)],
        None,
        id="The pod has a toleration that keys and values match the taint on the node, the effect of toleration "
        "is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
    ),
    pytest.param(
        [_tol("dedicated", "Equal", "user2", NS)],
        [_t("dedicated", "user1", PNS)],
        None,
        id="The pod has a toleration that key and value don't match the taint on the node, but the effect of "
        "taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
    ),
    pytest.param(
        [],
        [_t("dedicated", "user1", PNS)],
        None,
        id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled "
        "onto the node",
    ),
    # TestTaintTolerationFilterWithFeatureGate, gate disabled (as in every replayed release).
    pytest.param(
        [_tol("node.kubernetes.io/sla", "Gt", "750", NS)],
        [_t("node.kubernetes.io/sla", "950", NS)],
        0,
        id="Pod with Gt toleration cannot be scheduled when feature gate is disabled",
    ),
    pytest.param(
        [_tol("node.kubernetes.io/sla", "Lt", "950", NS)],
        [_t("node.kubernetes.io/sla", "800", NS)],
        0,
        id="Pod with Lt toleration cannot be scheduled when feature gate is disabled",
    ),
    pytest.param(
        [_tol("dedicated", "Equal", "user1", NS), _tol("node.kubernetes.io/sla", "Gt", "750", NS)],
        [_t("dedicated", "user1", NS)],
        None,
        id="Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal is honored",
    ),
    pytest.param(
        [_tol("dedicated", "Equal", "user1", NS), _tol("node.kubernetes.io/sla", "Gt", "750", NS)],
        [_t("dedicated", "user1", NS), _t("node.kubernetes.io/sla", "950", NS)],
        1,
        id="Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate is disabled",
    ),
]


@pytest.mark.parametrize(("tolerations", "taints", "untolerated"), FILTER_CASES)
def test_taint_toleration_filter(tolerations: list[Obj], taints: list[Obj], untolerated: int | None) -> None:
    dialect = dialect_for("v1.35.4")
    node = node_with_taints("nodeA", taints)
    snap = new_snapshot(None, [node], dialect=dialect)
    pl = new_plugin(TaintToleration, snap)
    st = pl.filter(CycleState(), pod_with_tolerations("pod1", tolerations, dialect), snap.node_infos[0])
    if untolerated is not None:
        assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (UNTOLERATED,))
    else:
        assert st.ok


@pytest.mark.parametrize(("tolerations", "taints", "untolerated"), FILTER_CASES)
def test_taint_toleration_filter_v1341_names_first_untolerated_taint(
    tolerations: list[Obj], taints: list[Obj], untolerated: int | None
) -> None:
    # release-4.21 taint_toleration.go: fmt.Sprintf("node(s) had untolerated taint {%s: %s}", key, value)
    node = node_with_taints("nodeA", taints)
    snap = new_snapshot(None, [node])
    pl = new_plugin(TaintToleration, snap)
    st = pl.filter(CycleState(), pod_with_tolerations("pod1", tolerations), snap.node_infos[0])
    if untolerated is None:
        assert st.ok
        return
    t = taints[untolerated]
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == (f"node(s) had untolerated taint {{{t['key']}: {t['value']}}}",)
