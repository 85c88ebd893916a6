"""NodeAffinity: PreFilter (skip, matchFields node names, conflicts), Filter, addedAffinity, Score."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, CycleState, PreFilterResult
from kdiagnose.scheduler.plugins.nodeaffinity.node_affinity import NodeAffinity
from tests.plugins.basic_factories import handle, node, pod, snapshot


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def name_in(*names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


ZONE_A = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}


@pytest.mark.parametrize(
    ("spec", "want_names", "want_code"),
    [
        pytest.param({}, None, Code.SKIP, id="no selector or affinity skips"),
        pytest.param(
            {"nodeSelector": {"zone": "a"}},
            None,
            Code.SUCCESS,
            id="nodeSelector alone runs without node names",
        ),
        pytest.param(
            {"affinity": required({"matchFields": [name_in("n1")]})}, {"n1"}, Code.SUCCESS, id="DaemonSet pin"
        ),
        pytest.param(
            {"affinity": required({"matchFields": [name_in("n1")]}, {"matchFields": [name_in("n2")]})},
            {"n1", "n2"},
            Code.SUCCESS,
            id="names are unioned over terms",
        ),
        pytest.param(
            {"affinity": required({"matchFields": [name_in("n1")]}, ZONE_A)},
            None,
            Code.SUCCESS,
            id="a term without names lifts the restriction",
        ),
        pytest.param(
            {"affinity": required({"matchFields": [name_in("n1", "n2"), name_in("n2", "n3")]})},
            {"n2"},
            Code.SUCCESS,
            id="requirements in a term intersect",
        ),
        pytest.param(
            {"affinity": required({"matchFields": [name_in("n1"), name_in("n2")]})},
            None,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            id="an empty intersection conflicts",
        ),
    ],
)
def test_pre_filter(spec: dict[str, Any], want_names: set[str] | None, want_code: Code) -> None:
    snap = snapshot([node("n1"), node("n2")])
    result, st = NodeAffinity(handle(snap)).pre_filter(CycleState(), pod(**spec))
    assert st.code == want_code
    if want_code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert st.reasons == ("pod affinity terms conflict",)
    if want_names is None:
        assert result is None or result.node_names is None
    else:
        assert isinstance(result, PreFilterResult)
        assert result.node_names == frozenset(want_names)


@pytest.mark.parametrize(
    ("spec", "labels", "ok"),
    [
        pytest.param({"nodeSelector": {"zone": "a"}}, {"zone": "a"}, True, id="nodeSelector matches"),
        pytest.param({"nodeSelector": {"zone": "a"}}, {"zone": "b"}, False, id="nodeSelector differs"),
        pytest.param(
            {"nodeSelector": {"zone": "a"}, "affinity": required(ZONE_A)},
            {"zone": "a"},
            True,
            id="both match",
        ),
        pytest.param(
            {"nodeSelector": {"disk": "ssd"}, "affinity": required(ZONE_A)},
            {"zone": "a"},
            False,
            id="nodeSelector AND affinity",
        ),
        pytest.param(
            {"affinity": required({})}, {"zone": "a"}, False, id="only an empty term matches nothing"
        ),
        pytest.param(
            {
                "affinity": required(
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "bad value"]}]}
                )
            },
            {"zone": "a"},
            False,
            id="a parse error is no match",
        ),
    ],
)
def test_filter(spec: dict[str, Any], labels: dict[str, str], ok: bool) -> None:
    snap = snapshot([node("n1", labels=labels)])
    pl = NodeAffinity(handle(snap))
    p = pod(**spec)
    state = CycleState()
    pl.pre_filter(state, p)
    st = pl.filter(state, p, snap.node_infos[0])
    assert st.ok is ok
    if not ok:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.reasons == ("node(s) didn't match Pod's node affinity/selector",)
        assert st.details and st.details[0]


def test_added_affinity_is_enforced_first() -> None:
    snap = snapshot([node("n1", labels={"pool": "general"}), node("n2", labels={"pool": "batch"})])
    args = {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}
                ]
            }
        }
    }
    pl = NodeAffinity(handle(snap, args))
    p = pod(nodeSelector={"pool": "general"})
    state = CycleState()
    _, st = pl.pre_filter(state, p)
    assert st.ok
    assert pl.filter(state, p, snap.node_infos[0]).reasons == (
        "node(s) didn't match scheduler-enforced node affinity",
    )
    assert pl.filter(state, p, snap.node_infos[1]).reasons == (
        "node(s) didn't match Pod's node affinity/selector",
    )
    # Even a pod with no selector of its own is filtered (no Skip).
    _, st = pl.pre_filter(CycleState(), pod())
    assert st.ok


def test_score_sums_matching_preferred_weights_and_normalizes() -> None:
    snap = snapshot([node("a", labels={"zone": "a", "ssd": "1"}), node("b", labels={"zone": "a"}), node("c")])
    pref = [
        {
            "weight": 20,
            "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
        },
        {"weight": 60, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}},
        {"weight": 0, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}},
    ]
    p = pod(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": pref}})
    pl = NodeAffinity(handle(snap))
    state = CycleState()
    assert pl.pre_score(state, p, snap.node_infos).ok
    raw = {ni.name: pl.score(state, p, ni)[0] for ni in snap.node_infos}
    assert raw == {"a": 80, "b": 20, "c": 0}
    pl.normalize_score(state, p, raw)
    assert raw == {"a": 100, "b": 25, "c": 0}


def test_pre_score_skips_without_preferred_terms() -> None:
    snap = snapshot([node("a")])
    assert NodeAffinity(handle(snap)).pre_score(CycleState(), pod(), snap.node_infos).code == Code.SKIP
