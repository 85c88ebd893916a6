"""PodTopologySpread: hard constraints (skew, minDomains, inclusion policies, counting rules), the
AddPod/RemovePod extensions, soft/default-constraint scoring and plugin args."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, CycleState, notes_of
from kdiagnose.scheduler.plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY, PreFilterState
from kdiagnose.scheduler.plugins.podtopologyspread.plugin import PodTopologySpread
from kdiagnose.scheduler.plugins.podtopologyspread.scoring import go_round
from tests.plugins.affinity_factories import (
    HOST,
    ZONE,
    filter_all,
    mk_node,
    mk_pod,
    mk_snapshot,
    plugin,
    scores,
    verdicts,
)

APP = {"app": "web"}
NOT_MATCH = "Unschedulable: node(s) didn't match pod topology spread constraints"
MISSING = "UnschedulableAndUnresolvable: node(s) didn't match pod topology spread constraints (missing required label)"


def tsc(key: str = ZONE, skew: int = 1, when: str = "DoNotSchedule", **extra: Any) -> dict[str, Any]:
    return {
        "maxSkew": skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": APP},
        **extra,
    }


def three_zones() -> list[Any]:
    return [mk_node("a1", "a"), mk_node("b1", "b"), mk_node("c1", "c")]


def web(name: str, node: str, **kw: Any) -> Any:
    return mk_pod(name, node, dict(APP), **kw)


@pytest.mark.parametrize(
    ("nodes", "existing", "incoming", "want"),
    [
        pytest.param(
            three_zones(),
            [web("w1", "a1"), web("w2", "b1")],
            mk_pod("new", labels=APP, topologySpreadConstraints=[tsc()]),
            {"a1": NOT_MATCH, "b1": NOT_MATCH, "c1": "ok"},
            id="zones a and b hold one each, c none: only c keeps skew within 1",
        ),
        pytest.param(
            three_zones(),
            [web("w1", "a1"), web("w2", "b1")],
            mk_pod("new", labels=APP, topologySpreadConstraints=[tsc(skew=2)]),
            {"a1": "ok", "b1": "ok", "c1": "ok"},
            id="maxSkew 2 tolerates 1+1-0",
        ),
        pytest.param(
            [*three_zones(), mk_node("x1")],
            [],
            mk_pod("new", labels=APP, topologySpreadConstraints=[tsc()]),
            {"a1": "ok", "b1": "ok", "c1": "ok", "x1": MISSING},
            id="a node without the topology key is UU missing label",
        ),
        pytest.param(
            [mk_node("a1", "a"), mk_node("b1", "b")],
            [web("w1", "a1"), web("w2", "b1")],
            mk_pod("new", labels=APP, topologySpreadConstraints=[tsc(minDomains=3)]),
            {"a1": NOT_MATCH, "b1": NOT_MATCH},
            id="fewer domains than minDomains makes the global minimum 0",
        ),
        pytest.param(
            [mk_node("a1", "a"), mk_node("b1", "b")],
            [web("w1", "a1"), web("w2", "b1")],
            mk_pod("new", labels=APP, topologySpreadConstraints=[tsc(minDomains=2)]),
            {"a1": "ok", "b1": "ok"},
            id="enough domains for minDomains: the minimum is the real one",
        ),
        pytest.param(
            three_zones(),
            [web("w1", "a1"), web("w2", "a1")],
            mk_pod("new", labels={"app": "other"}, topologySpreadConstraints=[tsc()]),
            {"a1": NOT_MATCH, "b1": "ok", "c1": "ok"},
            id="a pod not matching its own selector adds no self-match: 2+0-0 > 1 only in a",
        ),
        pytest.param(
            three_zones(),
            [
                web("w1", "a1"),
                web("w2", "b1"),
                web("t1", "c1", terminating=True),
                web("o1", "c1", namespace="other"),
            ],
            mk_pod("new", labels=APP, topologySpreadConstraints=[tsc()]),
            {"a1": NOT_MATCH, "b1": NOT_MATCH, "c1": "ok"},
            id="terminating pods and pods of other namespaces are not counted",
        ),
        pytest.param(
            three_zones(),
            [web("w1", "a1"), web("w2", "b1")],
            mk_pod("new", labels=APP, nodeSelector={ZONE: "a"}, topologySpreadConstraints=[tsc()]),
            {"a1": "ok", "b1": "ok", "c1": "ok"},
            id="nodeAffinityPolicy Honor: only zone a is a domain, its count is the minimum (others count 0)",
        ),
        pytest.param(
            three_zones(),
            [web("w1", "a1"), web("w2", "b1")],
            mk_pod(
                "new",
                labels=APP,
                nodeSelector={ZONE: "a"},
                topologySpreadConstraints=[tsc(nodeAffinityPolicy="Ignore")],
            ),
            {"a1": NOT_MATCH, "b1": NOT_MATCH, "c1": "ok"},
            id="nodeAffinityPolicy Ignore: the empty zone c counts for the minimum",
        ),
        pytest.param(
            [
                mk_node("a1", "a"),
                mk_node("b1", "b"),
                mk_node("c1", "c", taints=[{"key": "t", "effect": "NoSchedule"}]),
            ],
            [web("w1", "a1"), web("w2", "b1")],
            mk_pod("new", labels=APP, topologySpreadConstraints=[tsc(nodeTaintsPolicy="Honor")]),
            {"a1": "ok", "b1": "ok", "c1": "ok"},
            id="nodeTaintsPolicy Honor drops the tainted zone from the domains",
        ),
        pytest.param(
            [
                mk_node("a1", "a"),
                mk_node("b1", "b"),
                mk_node("c1", "c", taints=[{"key": "t", "effect": "NoSchedule"}]),
            ],
            [web("w1", "a1"), web("w2", "b1")],
            mk_pod("new", labels=APP, topologySpreadConstraints=[tsc()]),
            {"a1": NOT_MATCH, "b1": NOT_MATCH, "c1": "ok"},
            id="nodeTaintsPolicy Ignore (default) keeps the tainted zone",
        ),
        pytest.param(
            three_zones(),
            [
                mk_pod("v1a", "a1", {"app": "web", "rev": "1"}),
                mk_pod("v2a", "a1", {"app": "web", "rev": "2"}),
                mk_pod("v2b", "b1", {"app": "web", "rev": "2"}),
            ],
            mk_pod(
                "new",
                labels={"app": "web", "rev": "1"},
                topologySpreadConstraints=[tsc(matchLabelKeys=["rev"])],
            ),
            {"a1": NOT_MATCH, "b1": "ok", "c1": "ok"},
            id="matchLabelKeys restricts counting to the pod's own revision",
        ),
        pytest.param(
            [mk_node("h1", "a"), mk_node("h2", "a")],
            [web("w1", "h1")],
            mk_pod("new", labels=APP, topologySpreadConstraints=[tsc(ZONE), tsc(HOST)]),
            {"h1": NOT_MATCH, "h2": "ok"},
            id="two constraints: the hostname one fails on the node already running a replica",
        ),
    ],
)
def test_filter(nodes: list[Any], existing: list[Any], incoming: Any, want: dict[str, str]) -> None:
    pl = plugin(PodTopologySpread, mk_snapshot(nodes, existing))
    pre, statuses = filter_all(pl, incoming)
    assert pre.code == Code.SUCCESS
    assert verdicts(statuses) == want


def test_filter_details_name_the_domain_and_counts() -> None:
    pl = plugin(PodTopologySpread, mk_snapshot(three_zones(), [web("w1", "a1"), web("w2", "a1")]))
    _, statuses = filter_all(pl, mk_pod("new", labels=APP, topologySpreadConstraints=[tsc()]))
    d = statuses["a1"].details[0]
    assert (d["domain"], d["matchingPods"], d["selfMatch"], d["globalMinimum"], d["skew"], d["maxSkew"]) == (
        "a",
        2,
        1,
        0,
        3,
        1,
    )


@pytest.mark.parametrize(
    ("incoming", "args"),
    [
        pytest.param(mk_pod("new", labels=APP), {}, id="no constraints and System defaults (never hard)"),
        pytest.param(
            mk_pod("new", labels=APP, topologySpreadConstraints=[tsc(when="ScheduleAnyway")]),
            {},
            id="only ScheduleAnyway constraints",
        ),
        pytest.param(
            mk_pod("new", labels=APP),
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            id="List defaults but nothing selects the pod",
        ),
    ],
)
def test_pre_filter_skips(incoming: Any, args: dict[str, Any]) -> None:
    pl = plugin(PodTopologySpread, mk_snapshot(three_zones(), [web("w1", "a1")]), args)
    pre, _ = filter_all(pl, incoming)
    assert pre.code == Code.SKIP


def test_list_default_constraints_filter_pods_selected_by_a_service() -> None:
    service = {
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": APP},
    }
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}],
    }
    snap = mk_snapshot(three_zones(), [web("w1", "a1"), web("w2", "b1")], {"Service": [service]})
    pl = plugin(PodTopologySpread, snap, args)
    _, statuses = filter_all(pl, mk_pod("new", labels=APP))
    assert verdicts(statuses) == {"a1": NOT_MATCH, "b1": NOT_MATCH, "c1": "ok"}


def test_add_and_remove_pod_update_a_cloned_state_only() -> None:
    snap = mk_snapshot(three_zones(), [web("w1", "a1"), web("w2", "b1")])
    pl = plugin(PodTopologySpread, snap)
    incoming = mk_pod("new", labels=APP, topologySpreadConstraints=[tsc()])
    state = CycleState()
    pl.pre_filter(state, incoming)
    c1 = snap.node_info_by_name["c1"]
    a1 = snap.node_info_by_name["a1"]

    added = state.clone()
    pl.add_pod(added, incoming, web("w3", "c1"), c1)
    # Every zone now holds one: all nodes fit 1+1-1.
    assert [pl.filter(added, incoming, ni).ok for ni in snap.node_infos] == [True, True, True]
    # The original state is untouched.
    assert pl.filter(state, incoming, a1).code == Code.UNSCHEDULABLE

    removed = state.clone()
    pl.remove_pod(removed, incoming, snap.node_info_by_name["a1"].pods[0], a1)
    assert pl.filter(removed, incoming, a1).ok
    s: PreFilterState = removed.read(PRE_FILTER_STATE_KEY)
    assert s.counts[0] == {"a": 0, "b": 1, "c": 0}

    other_ns = state.clone()
    pl.add_pod(other_ns, incoming, web("x", "c1", namespace="other"), c1)
    assert pl.filter(other_ns, incoming, c1).ok and not pl.filter(other_ns, incoming, a1).ok


@pytest.mark.parametrize(
    ("existing", "want"),
    [
        # hostname constraint maxSkew 1, 2 candidate nodes: weight ln(2+2); n1 = round(2·1.386) = 3, n2 = 0.
        # Normalized 100·(max+min−s)/max: n1 = 100·0/3 = 0, n2 = 100·3/3 = 100.
        pytest.param([web("w1", "n1"), web("w2", "n1")], {"n1": 0, "n2": 100}, id="two replicas on n1"),
        # n1 = round(1.386) = 1, n2 = 0: n1 = 100·(1+0−1)/1 = 0, n2 = 100.
        pytest.param([web("w1", "n1")], {"n1": 0, "n2": 100}, id="one replica on n1"),
        # Both 0: max 0 gives every node 100.
        pytest.param([], {"n1": 100, "n2": 100}, id="no replicas anywhere"),
    ],
)
def test_soft_hostname_scores(existing: list[Any], want: dict[str, int]) -> None:
    snap = mk_snapshot([mk_node("n1", "a"), mk_node("n2", "a")], existing)
    pl = plugin(PodTopologySpread, snap)
    incoming = mk_pod("new", labels=APP, topologySpreadConstraints=[tsc(HOST, when="ScheduleAnyway")])
    assert scores(pl, incoming) == want


def test_soft_zone_score_uses_log_weight_and_maxskew() -> None:
    # Zone constraint maxSkew 2 over zones {a, b}: weight ln(4) = 1.3863.
    # a: 3 pods -> 3·1.3863 + 1 = 5.159 -> 5; b: 0 -> 1. Normalized: a = 100·(5+1−5)/5 = 20, b = 100·5/5 = 100.
    nodes = [mk_node("a1", "a"), mk_node("a2", "a"), mk_node("b1", "b")]
    existing = [web("w1", "a1"), web("w2", "a1"), web("w3", "a2")]
    pl = plugin(PodTopologySpread, mk_snapshot(nodes, existing))
    incoming = mk_pod("new", labels=APP, topologySpreadConstraints=[tsc(ZONE, skew=2, when="ScheduleAnyway")])
    assert scores(pl, incoming) == {"a1": 20, "a2": 20, "b1": 100}


def test_soft_constraints_ignore_nodes_missing_the_key() -> None:
    nodes = [mk_node("a1", "a"), mk_node("b1", "b"), mk_node("x1")]
    pl = plugin(PodTopologySpread, mk_snapshot(nodes, [web("w1", "a1")]))
    incoming = mk_pod("new", labels=APP, topologySpreadConstraints=[tsc(ZONE, when="ScheduleAnyway")])
    # a: round(1·ln4) = 1, b: 0, x1 ignored -> 0.
    assert scores(pl, incoming) == {"a1": 0, "b1": 100, "x1": 0}


def test_system_defaults_apply_to_pods_selected_by_a_replicaset() -> None:
    rs = {
        "kind": "ReplicaSet",
        "metadata": {"name": "web-1", "namespace": "default"},
        "spec": {"selector": {"matchLabels": APP}},
    }
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1"}
    # n3 has no zone label: under System defaults it is still scored by hostname.
    nodes = [mk_node("n1", "a"), mk_node("n2", "b"), mk_node("n3")]
    existing = [web("w1", "n1"), web("w2", "n1")]
    snap = mk_snapshot(nodes, existing, {"ReplicaSet": [rs], "Service": []})
    pl = plugin(PodTopologySpread, snap)
    # hostname (maxSkew 3, weight ln(3+2)=1.609) + zone (maxSkew 5, zones {a, b, ""}: weight ln(5)):
    # n1: 2·1.609+2 + 2·1.609+4 = 12.44 -> 12; n2: 2 + 4 = 6; n3: only hostname: 2.
    # Normalized 100·(12+2−s)/12: n1 = 16, n2 = 66, n3 = 100.
    assert scores(pl, mk_pod("new", labels=APP, owner=owner)) == {"n1": 16, "n2": 66, "n3": 100}
    assert scores(pl, mk_pod("adhoc", labels=APP)) is None


def test_service_selector_merges_and_missing_kinds_are_noted() -> None:
    svc = {"kind": "Service", "metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": APP}}
    snap = mk_snapshot([mk_node("n1", "a"), mk_node("n2", "a")], [web("w1", "n1")], {"Service": [svc]})
    pl = plugin(PodTopologySpread, snap)
    got = scores(pl, mk_pod("new", labels=APP))
    # hostname: n1 = 1·ln4 + 2 = 3.39 -> 3, n2 = 2; zone (one domain, weight ln3): both 1·1.0986+4 = 5.1.
    # n1 = round(3.386+5.099) = 8, n2 = round(2+5.099) = 7 -> n1 = 100·7/8 = 87, n2 = 100·8/8 = 100.
    assert got == {"n1": 87, "n2": 100}

    state = CycleState()
    bare = plugin(PodTopologySpread, mk_snapshot([mk_node("n1", "a")], []))
    bare.pre_score(state, mk_pod("new", labels=APP), bare.snapshot.node_infos)
    assert any("Service" in n for n in notes_of(state))


@pytest.mark.parametrize(
    ("x", "want"),
    [
        pytest.param(2.5, 3, id="half rounds away from zero"),
        pytest.param(3.5, 4, id="odd half too"),
        pytest.param(2.4999, 2, id="below half rounds down"),
        pytest.param(0.0, 0, id="zero"),
    ],
)
def test_go_round(x: float, want: int) -> None:
    assert go_round(x) == want
