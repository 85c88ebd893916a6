"""Port of upstream nodeaffinity/node_affinity_test.go (TestNodeAffinity with PreFilterResult and
addedAffinity args, TestNodeAffinityPriority) and component-helpers
scheduling/corev1/nodeaffinity/nodeaffinity_test.go (TestNodeSelectorMatch, TestPreferredSchedulingTermsScore,
TestNodeSelectorRequirementsAsSelector as matching, TestPodMatchesNodeSelectorAndAffinityTerms).

Skipped as Go-only: Test_isSchedulableAfterNodeChange (queueing hints), the exact field.Error texts of
NewNodeSelector (kdiagnose only needs "this term matches nothing").
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import MAX_NODE_SCORE, Code, CycleState, Status
from kdiagnose.scheduler.plugins.helper.node_selector import (
    RequiredNodeSelector,
    parse_node_selector_terms,
    parse_preferred_terms,
)
from kdiagnose.scheduler.plugins.nodeaffinity.node_affinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
)
from tests.upstream.basic_builders import make_node, make_pod
from tests.upstream.builders import new_plugin, new_snapshot

Obj = dict[str, Any]
NAME = "metadata.name"


def _req(key: str, op: str, values: list[str] | None = None) -> Obj:
    d: Obj = {"key": key, "operator": op}
    if values is not None:
        d["values"] = values
    return d


def _term(exprs: list[Obj] | None = None, fields: list[Obj] | None = None) -> Obj:
    t: Obj = {}
    if exprs is not None:
        t["matchExpressions"] = exprs
    if fields is not None:
        t["matchFields"] = fields
    return t


def _required(*terms: Obj) -> Obj:
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def _pod(spec: Obj) -> Any:
    return make_pod().name("p").spec(**spec).obj()


UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
FIELD_NODE1 = _req(NAME, "In", ["node1"])
FIELD_NODE2 = _req(NAME, "In", ["node2"])
ADDED_NODE2 = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_term(fields=[FIELD_NODE2])]}
    }
}

# (pod spec, node labels, node name, args, want PreFilter (code, reasons) or None=Success,
#  want PreFilterResult names or None, want Filter (code, reason) or None=Success, run PreFilter)
NODE_AFFINITY_CASES = [
    pytest.param(
        {"nodeSelector": {"foo": "bar"}}, {}, "", {}, None, None, ERR_REASON_POD, True, id="missing labels"
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "", {}, None, None, None, True, id="same labels"
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar", "baz": "blah"},
        "",
        {},
        None,
        None,
        None,
        True,
        id="node labels are superset",
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar", "baz": "blah"}},
        {"foo": "bar"},
        "",
        {},
        None,
        None,
        ERR_REASON_POD,
        True,
        id="node labels are subset",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("foo", "In", ["bar", "value2"])]))},
        {"foo": "bar"},
        "",
        {},
        None,
        None,
        None,
        True,
        id="Pod with matchExpressions using In operator that matches the existing node",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("kernel-version", "Gt", ["0204"])]))},
        {"kernel-version": "0206"},
        "",
        {},
        None,
        None,
        None,
        True,
        id="Pod with matchExpressions using Gt operator that matches the existing node",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("mem-type", "NotIn", ["DDR", "DDR2"])]))},
        {"mem-type": "DDR3"},
        "",
        {},
        None,
        None,
        None,
        True,
        id="Pod with matchExpressions using NotIn operator that matches the existing node",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("GPU", "Exists")]))},
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        {},
        None,
        None,
        None,
        True,
        id="Pod with matchExpressions using Exists operator that matches the existing node",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("foo", "In", ["value1", "value2"])]))},
        {"foo": "bar"},
        "",
        {},
        None,
        None,
        ERR_REASON_POD,
        True,
        id="Pod with affinity that don't match node's labels won't schedule onto the node",
    ),
    pytest.param(
        {"affinity": _required(_term([]))},
        {"foo": "bar"},
        "",
        {},
        None,
        None,
        ERR_REASON_POD,
        True,
        id="Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto "
        "the node",
    ),
    pytest.param(
        {},
        {"foo": "bar"},
        "",
        {},
        (Code.SKIP, ()),
        None,
        None,
        True,
        id="Pod with no Affinity will schedule onto a node",
    ),
    pytest.param(
        {"affinity": {"nodeAffinity": {}}},
        {"foo": "bar"},
        "",
        {},
        (Code.SKIP, ()),
        None,
        None,
        True,
        id="Pod with Affinity but nil NodeSelector will schedule onto a node",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("GPU", "Exists"), _req("GPU", "NotIn", ["AMD", "INTER"])]))},
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        {},
        None,
        None,
        None,
        True,
        id="Pod with multiple matchExpressions ANDed that matches the existing node",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("GPU", "Exists"), _req("GPU", "In", ["AMD", "INTER"])]))},
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        {},
        None,
        None,
        ERR_REASON_POD,
        True,
        id="Pod with multiple matchExpressions ANDed that doesn't match the existing node",
    ),
    pytest.param(
        {
            "affinity": _required(
                _term([_req("foo", "In", ["bar", "value2"])]),
                _term([_req("diffkey", "In", ["wrong", "value2"])]),
            )
        },
        {"foo": "bar"},
        "",
        {},
        None,
        None,
        None,
        True,
        id="Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto "
        "the node",
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar"}, "affinity": _required(_term([_req("foo", "Exists")]))},
        {"foo": "bar"},
        "",
        {},
        None,
        None,
        None,
        True,
        id="Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are "
        "satisfied, will schedule onto the node",
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar"}, "affinity": _required(_term([_req("foo", "Exists")]))},
        {"foo": "barrrrrr"},
        "",
        {},
        None,
        None,
        ERR_REASON_POD,
        True,
        id="Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
        "deprecating) is not satisfied, won't schedule onto the node",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("foo", "NotIn", ["invalid value: ___@#$%^"])]))},
        {"foo": "bar"},
        "",
        {},
        None,
        None,
        ERR_REASON_POD,
        True,
        id="Pod with an invalid value in Affinity term won't be scheduled onto the node",
    ),
    pytest.param(
        {"affinity": _required(_term(fields=[FIELD_NODE1]))},
        {},
        "node1",
        {},
        None,
        {"node1"},
        None,
        True,
        id="Pod with matchFields using In operator that matches the existing node",
    ),
    pytest.param(
        {"affinity": _required(_term(fields=[FIELD_NODE1]))},
        {},
        "node2",
        {},
        None,
        {"node1"},
        ERR_REASON_POD,
        True,
        id="Pod with matchFields using In operator that does not match the existing node",
    ),
    pytest.param(
        {
            "affinity": _required(
                _term(fields=[FIELD_NODE1, FIELD_NODE2]), _term([_req("foo", "In", ["bar"])])
            )
        },
        {"foo": "bar"},
        "node2",
        {},
        None,
        None,
        None,
        True,
        id="Pod with two terms: matchFields does not match, but matchExpressions matches",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("foo", "In", ["bar"])], [FIELD_NODE1]))},
        {"foo": "bar"},
        "node2",
        {},
        None,
        {"node1"},
        ERR_REASON_POD,
        True,
        id="Pod with one term: matchFields does not match, but matchExpressions matches",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("foo", "In", ["bar"])], [FIELD_NODE1]))},
        {"foo": "bar"},
        "node1",
        {},
        None,
        {"node1"},
        None,
        True,
        id="Pod with one term: both matchFields and matchExpressions match",
    ),
    pytest.param(
        {
            "affinity": _required(
                _term(fields=[FIELD_NODE1]), _term([_req("foo", "In", ["not-match-to-bar"])])
            )
        },
        {"foo": "bar"},
        "node2",
        {},
        None,
        None,
        ERR_REASON_POD,
        True,
        id="Pod with two terms: both matchFields and matchExpressions do not match",
    ),
    pytest.param(
        {"affinity": _required(_term(fields=[FIELD_NODE1]), _term(fields=[FIELD_NODE2]))},
        {},
        "node2",
        {},
        None,
        {"node1", "node2"},
        None,
        True,
        id="Pod with two terms of node.Name affinity",
    ),
    pytest.param(
        {"affinity": _required(_term(fields=[FIELD_NODE1, FIELD_NODE2]))},
        {"foo": "bar"},
        "node2",
        {},
        (UU, (ERR_REASON_CONFLICT,)),
        None,
        ERR_REASON_POD,
        True,
        id="Pod with two conflicting mach field requirements",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("zone", "In", ["foo"])]))},
        {"zone": "foo"},
        "node2",
        ADDED_NODE2,
        None,
        None,
        None,
        True,
        id="Matches added affinity and Pod's node affinity",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("zone", "In", ["bar"])]))},
        {"zone": "foo"},
        "node2",
        ADDED_NODE2,
        None,
        None,
        ERR_REASON_POD,
        True,
        id="Matches added affinity but not Pod's node affinity",
    ),
    pytest.param(
        {},
        {"zone": "foo"},
        "node2",
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [_term([_req("zone", "In", ["bar"])])]
                }
            }
        },
        None,
        None,
        ERR_REASON_ENFORCED,
        True,
        id="Doesn't match added affinity",
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar", "baz": "blah"},
        "",
        {},
        None,
        None,
        None,
        False,
        id="Matches node selector correctly even if PreFilter is not called",
    ),
    pytest.param(
        {"affinity": _required(_term([_req("GPU", "Exists"), _req("GPU", "NotIn", ["AMD", "INTER"])]))},
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        {},
        None,
        None,
        None,
        False,
        id="Matches node affinity correctly even if PreFilter is not called",
    ),
]


@pytest.mark.parametrize(
    ("spec", "labels", "node_name", "args", "want_pre", "want_names", "want_reason", "run_pre_filter"),
    NODE_AFFINITY_CASES,
)
def test_node_affinity(
    spec: Obj,
    labels: dict[str, str],
    node_name: str,
    args: Obj,
    want_pre: tuple[Code, tuple[str, ...]] | None,
    want_names: set[str] | None,
    want_reason: str | None,
    run_pre_filter: bool,
) -> None:
    node = make_node().name(node_name).labels(labels).obj()
    snap = new_snapshot(None, [node])
    pl = new_plugin(NodeAffinity, snap, args)
    pod = _pod(spec)
    state = CycleState()
    if run_pre_filter:
        result, st = pl.pre_filter(state, pod)
        assert (st.code, st.reasons) == (want_pre or (Code.SUCCESS, ()))
        got_names = None if result is None or result.node_names is None else set(result.node_names)
        assert got_names == want_names
    st2: Status = pl.filter(state, pod, snap.node_infos[0])
    if want_reason is None:
        assert st2.ok
    else:
        assert (st2.code, st2.reasons) == (UU, (want_reason,))


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def _pref(weight: int, *exprs: Obj) -> Obj:
    return {"weight": weight, "preference": _term(list(exprs))}


AFFINITY1 = {
    "nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [_pref(2, _req("foo", "In", ["bar"]))]
    }
}
AFFINITY2 = {
    "nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            _pref(2, _req("foo", "In", ["bar"])),
            _pref(4, _req("key", "In", ["value"])),
            _pref(5, _req("foo", "In", ["bar"]), _req("key", "In", ["value"]), _req("az", "In", ["az1"])),
        ]
    }
}


@pytest.mark.parametrize(
    ("spec", "nodes", "args", "run_pre_score", "expected"),
    [
        pytest.param(
            {},
            [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
            {},
            True,
            {"node1": 0, "node2": 0, "node3": 0},
            id="all nodes are same priority as NodeAffinity is nil",
        ),
        pytest.param(
            {"affinity": AFFINITY1},
            [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
            {},
            True,
            {"node1": 0, "node2": 0, "node3": 0},
            id="no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is "
            "zero",
        ),
        pytest.param(
            {"affinity": AFFINITY1},
            [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
            {},
            True,
            {"node1": MAX_NODE_SCORE, "node2": 0, "node3": 0},
            id="only node1 matches the preferred scheduling requirements of pod",
        ),
        pytest.param(
            {"affinity": AFFINITY2},
            [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
            {},
            True,
            {"node1": 18, "node5": MAX_NODE_SCORE, "node2": 36},
            id="all nodes matches the preferred scheduling requirements of pod but with different priorities ",
        ),
        pytest.param(
            {},
            [("node1", LABEL1), ("node2", LABEL2)],
            {"addedAffinity": AFFINITY1["nodeAffinity"]},
            True,
            {"node1": MAX_NODE_SCORE, "node2": 0},
            id="added affinity",
        ),
        pytest.param(
            {"affinity": AFFINITY1},
            [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        _pref(3, _req("key", "In", ["value"]))
                    ]
                }
            },
            True,
            {"node1": 40, "node2": 60, "node3": MAX_NODE_SCORE},
            id="added affinity and pod has default affinity",
        ),
        pytest.param(
            {"affinity": AFFINITY2},
            [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
            {},
            False,
            {"node1": 18, "node5": MAX_NODE_SCORE, "node2": 36},
            id="calculate the priorities correctly even if PreScore is not called",
        ),
    ],
)
def test_node_affinity_priority(
    spec: Obj,
    nodes: list[tuple[str, dict[str, str]]],
    args: Obj,
    run_pre_score: bool,
    expected: dict[str, int],
) -> None:
    snap = new_snapshot(None, [make_node().name(n).labels(lb).obj() for n, lb in nodes])
    pl = new_plugin(NodeAffinity, snap, args)
    pod = _pod(spec)
    state = CycleState()
    if run_pre_score:
        st = pl.pre_score(state, pod, snap.node_infos)
        # upstream ignores a Skip here (all-zero list); a Skip must only happen without any preferred terms
        assert st.ok or (st.code == Code.SKIP and not spec and not args)
    scores = {}
    for ni in snap.node_infos:
        s, st = pl.score(state, pod, ni)
        assert st.ok
        scores[ni.name] = s
    assert pl.normalize_score(state, pod, scores).ok
    assert scores == expected


# ---- component-helpers nodeaffinity_test.go ------------------------------------------------------------


@pytest.mark.parametrize(
    ("terms", "node_name", "labels", "want"),
    [
        pytest.param(
            [_term([_req("label_1", "In", ["label_1_val"])], [_req(NAME, "In", ["host_1"])])],
            "host_1",
            {},
            False,
            id="node matches field selector, but not labels",
        ),
        pytest.param(
            [_term([_req("label_1", "In", ["label_1_val"])], [_req(NAME, "In", ["host_1"])])],
            "host_1",
            {"label_1": "label_1_val"},
            True,
            id="node matches field selector and label selector",
        ),
        pytest.param(
            [_term([_req("label_1", "In", ["label_1_val"])]), _term(fields=[_req(NAME, "In", ["host_1"])])],
            "host_1",
            {},
            True,
            id="second term matches",
        ),
        # "invalid field selector and label selector": NewNodeSelector errors; the lazy selector the pods'
        # affinity uses makes those terms match nothing while the valid one still counts.
        pytest.param(
            [
                _term(fields=[_req(NAME, "In", ["host_1", "host_2"])]),
                _term([_req("label_1", "In", ["label_1_val"])], [_req(NAME, "In", ["host_1"])]),
                _term([_req("invalid key", "In", ["label_value"])]),
            ],
            "host_1",
            {"label_1": "label_1_val", "invalid key": "label_value"},
            True,
            id="invalid field selector and label selector (lazy errors: only the valid term counts)",
        ),
        pytest.param(
            [
                _term(fields=[_req(NAME, "In", ["host_1", "host_2"])]),
                _term([_req("invalid key", "In", ["label_value"])]),
            ],
            "host_1",
            {"invalid key": "label_value"},
            False,
            id="invalid field selector and label selector (lazy errors: invalid terms match nothing)",
        ),
        # nodeSelectorRequirementsAsSelector: Gt/Lt build foo>1 / bar<7; Exists with values is an error.
        pytest.param([_term([_req("foo", "Gt", ["1"])])], "n", {"foo": "2"}, True, id="foo>1 matches foo=2"),
        pytest.param([_term([_req("foo", "Gt", ["1"])])], "n", {"foo": "1"}, False, id="foo>1 rejects foo=1"),
        pytest.param([_term([_req("bar", "Lt", ["7"])])], "n", {"bar": "6"}, True, id="bar<7 matches bar=6"),
        pytest.param([_term([_req("bar", "Lt", ["7"])])], "n", {"bar": "7"}, False, id="bar<7 rejects bar=7"),
        pytest.param(
            [_term([_req("foo", "Gt", ["1"])])], "n", {"foo": "x"}, False, id="Gt rejects a non-integer label"
        ),
        pytest.param([_term([_req("foo", "Gt", ["1"])])], "n", {}, False, id="Gt rejects a missing label"),
        pytest.param(
            [_term([_req("foo", "Gt", ["a"])])],
            "n",
            {"foo": "2"},
            False,
            id="Gt with a non-integer value is invalid",
        ),
        pytest.param(
            [_term([_req("foo", "Gt", ["1", "2"])])],
            "n",
            {"foo": "3"},
            False,
            id="Gt needs exactly one value",
        ),
        pytest.param(
            [_term([_req("foo", "Exists", ["bar", "baz"])])],
            "n",
            {"foo": "bar"},
            False,
            id="values set must be empty for exists and does not exist",
        ),
        pytest.param([_term([_req("foo", "In", [])])], "n", {"foo": ""}, False, id="In needs values"),
        pytest.param(
            [_term([_req("foo", "Equals", ["bar"])])],
            "n",
            {"foo": "bar"},
            False,
            id="unknown operator is invalid",
        ),
        pytest.param(
            [_term(fields=[_req(NAME, "Exists", ["n"])])],
            "n",
            {},
            False,
            id="matchFields only allows In/NotIn",
        ),
        pytest.param(
            [_term(fields=[_req(NAME, "NotIn", ["other"])])],
            "n",
            {},
            True,
            id="matchFields NotIn another name",
        ),
        pytest.param(
            [_term(fields=[_req("spec.foo", "In", ["x"])])],
            "n",
            {},
            False,
            id="matchFields on another field reads empty",
        ),
        pytest.param([], "n", {}, False, id="no terms match nothing"),
    ],
)
def test_node_selector_match(terms: list[Obj], node_name: str, labels: dict[str, str], want: bool) -> None:
    node = make_node().name(node_name).labels(labels).obj()
    assert any(t.match(node) for t in parse_node_selector_terms(terms)) is want


@pytest.mark.parametrize(
    ("terms", "want"),
    [
        pytest.param(
            [
                {"weight": 0, "preference": _term(fields=[_req(NAME, "In", ["host_1", "host_2"])])},
            ],
            0,
            id="invalid field selector but no weight, error not reported",
        ),
        pytest.param(
            [
                {"weight": 5, "preference": _term(fields=[_req(NAME, "In", ["host_1"])])},
                {"weight": 7, "preference": _term([_req("unknown_label", "In", ["unknown_label_val"])])},
                {"weight": 11, "preference": _term([_req("label_1", "In", ["label_1_val"])])},
            ],
            16,
            id="first and third term match",
        ),
    ],
)
def test_preferred_scheduling_terms_score(terms: list[Obj], want: int) -> None:
    node = make_node().name("host_1").labels({"label_1": "label_1_val"}).obj()
    assert sum(w for t, w in parse_preferred_terms(terms) if t.match(node)) == want


TWO_TERMS_FIELDS_EXPR = _required(
    _term(fields=[_req(NAME, "In", ["node_1"])]), _term([_req("foo", "In", ["bar"])])
)


@pytest.mark.parametrize(
    ("spec", "labels", "node_name", "want"),
    [
        pytest.param({}, {}, "", True, id="no selector"),
        pytest.param({"nodeSelector": {"foo": "bar"}}, {}, "", False, id="missing labels"),
        pytest.param({"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "", True, id="same labels"),
        pytest.param(
            {"nodeSelector": {"foo": "bar"}},
            {"foo": "bar", "baz": "blah"},
            "",
            True,
            id="node labels are superset",
        ),
        pytest.param(
            {"nodeSelector": {"foo": "bar", "baz": "blah"}},
            {"foo": "bar"},
            "",
            False,
            id="node labels are subset",
        ),
        pytest.param(
            {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}},
            {"foo": "bar"},
            "",
            False,
            id="Pod with a nil []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto "
            "the node",
        ),
        pytest.param(
            {"affinity": _required()},
            {"foo": "bar"},
            "",
            False,
            id="Pod with an empty []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule "
            "onto the node",
        ),
        pytest.param(
            {"affinity": _required(_term([]))},
            {"foo": "bar"},
            "",
            False,
            id="Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto "
            "the node",
        ),
        pytest.param(
            {"affinity": _required(_term(fields=[_req(NAME, "In", ["node_1"])]))},
            {},
            "node_1",
            True,
            id="Pod with matchFields using In operator that matches the existing node",
        ),
        pytest.param(
            {"affinity": _required(_term(fields=[_req(NAME, "In", ["node_1"])]))},
            {},
            "node_2",
            False,
            id="Pod with matchFields using In operator that does not match the existing node",
        ),
        pytest.param(
            {"affinity": TWO_TERMS_FIELDS_EXPR},
            {"foo": "bar"},
            "node_2",
            True,
            id="Pod with two terms: matchFields does not match, but matchExpressions matches",
        ),
        pytest.param(
            {"affinity": _required(_term([_req("foo", "In", ["bar"])], [_req(NAME, "In", ["node_1"])]))},
            {"foo": "bar"},
            "node_2",
            False,
            id="Pod with one term: matchFields does not match, but matchExpressions matches",
        ),
        pytest.param(
            {"affinity": _required(_term([_req("foo", "In", ["bar"])], [_req(NAME, "In", ["node_1"])]))},
            {"foo": "bar"},
            "node_1",
            True,
            id="Pod with one term: both matchFields and matchExpressions match",
        ),
    ],
)
def test_pod_matches_node_selector_and_affinity_terms(
    spec: Obj, labels: dict[str, str], node_name: str, want: bool
) -> None:
    pod = _pod(spec)
    node = make_node().name(node_name).labels(labels).obj()
    assert RequiredNodeSelector.of(pod.node_selector, pod.affinity).match(node) is want
