"""InterPodAffinity: required affinity / anti-affinity / existing pods' anti-affinity, the first-pod exception,
namespace semantics, matchLabelKeys, AddPod/RemovePod, and scoring with its args."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.interpodaffinity.plugin import InterPodAffinity
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

AFF = "UnschedulableAndUnresolvable: node(s) didn't match pod affinity rules"
ANTI = "Unschedulable: node(s) didn't match pod anti-affinity rules"
EXISTING = "Unschedulable: node(s) didn't satisfy existing pods anti-affinity rules"


def term(labels: dict[str, str], key: str = HOST, **extra: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key, **extra}


def affinity(
    required: list[dict[str, Any]] | None = None, anti: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if required:
        out["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": required}
    if anti:
        out["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    return out


def preferred(
    aff: Sequence[tuple[int, dict[str, Any]]] = (), anti: Sequence[tuple[int, dict[str, Any]]] = ()
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if aff:
        out["podAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in aff
            ]
        }
    if anti:
        out["podAntiAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in anti
            ]
        }
    return out


def zones() -> list[Any]:
    return [mk_node("a1", "a"), mk_node("a2", "a"), mk_node("b1", "b"), mk_node("x1")]


CACHE = {"app": "cache"}
WEB = {"app": "web"}


@pytest.mark.parametrize(
    ("nodes", "existing", "incoming", "want"),
    [
        pytest.param(
            zones(),
            [mk_pod("c1", "a1", CACHE)],
            mk_pod("new", labels=WEB, affinity=affinity([term(CACHE, ZONE)])),
            {"a1": "ok", "a2": "ok", "b1": AFF, "x1": AFF},
            id="zone affinity: both nodes of zone a pass, b and the key-less node fail UU",
        ),
        pytest.param(
            zones(),
            [],
            mk_pod("new", labels=CACHE, affinity=affinity([term(CACHE, ZONE)])),
            {"a1": "ok", "a2": "ok", "b1": "ok", "x1": AFF},
            id="first pod of the group: no match anywhere and the pod matches itself",
        ),
        pytest.param(
            zones(),
            [],
            mk_pod("new", labels=WEB, affinity=affinity([term(CACHE, ZONE)])),
            {"a1": AFF, "a2": AFF, "b1": AFF, "x1": AFF},
            id="no first-pod exception when the pod does not match its own terms",
        ),
        pytest.param(
            zones(),
            [mk_pod("c1", "a1", CACHE, namespace="other")],
            mk_pod("new", labels=WEB, affinity=affinity([term(CACHE, ZONE)])),
            {"a1": AFF, "a2": AFF, "b1": AFF, "x1": AFF},
            id="a term without namespaces only looks at the pod's own namespace",
        ),
        pytest.param(
            zones(),
            [mk_pod("c1", "a1", CACHE, namespace="other")],
            mk_pod("new", labels=WEB, affinity=affinity([term(CACHE, ZONE, namespaces=["other"])])),
            {"a1": "ok", "a2": "ok", "b1": AFF, "x1": AFF},
            id="namespaces lists the other namespace",
        ),
        pytest.param(
            zones(),
            [mk_pod("w1", "a1", WEB)],
            mk_pod("new", labels=WEB, affinity=affinity(anti=[term(WEB, HOST)])),
            {"a1": ANTI, "a2": "ok", "b1": "ok", "x1": "ok"},
            id="hostname anti-affinity rejects only the node running a match",
        ),
        pytest.param(
            zones(),
            [mk_pod("w1", "a1", WEB)],
            mk_pod("new", labels=WEB, affinity=affinity(anti=[term(WEB, ZONE)])),
            {"a1": ANTI, "a2": ANTI, "b1": "ok", "x1": "ok"},
            id="zone anti-affinity blocks the zone; a node without the key passes",
        ),
        pytest.param(
            zones(),
            [mk_pod("w1", "a1", WEB, namespace="team-a")],
            mk_pod("new", labels=WEB, affinity=affinity(anti=[term(WEB, HOST, namespaceSelector={})])),
            {"a1": ANTI, "a2": "ok", "b1": "ok", "x1": "ok"},
            id="namespaceSelector {} selects all namespaces",
        ),
        pytest.param(
            zones(),
            [mk_pod("db", "b1", {"app": "db"}, affinity=affinity(anti=[term(WEB, ZONE)]))],
            mk_pod("new", labels=WEB),
            {"a1": "ok", "a2": "ok", "b1": EXISTING, "x1": "ok"},
            id="an existing pod's anti-affinity blocks its zone for the incoming pod",
        ),
        pytest.param(
            zones(),
            [
                mk_pod("c1", "b1", CACHE),
                mk_pod("db", "a1", {"app": "db"}, affinity=affinity(anti=[term(WEB, ZONE)])),
            ],
            mk_pod("new", labels=WEB, affinity=affinity([term(CACHE, ZONE)], [term(WEB, HOST)])),
            {"a1": AFF, "a2": AFF, "b1": "ok", "x1": AFF},
            id="affinity is checked before the existing pods' anti-affinity",
        ),
        pytest.param(
            zones(),
            [mk_pod("w1", "a1", {"app": "web", "rev": "1"}), mk_pod("w2", "b1", {"app": "web", "rev": "2"})],
            mk_pod(
                "new",
                labels={"app": "web", "rev": "2"},
                affinity=affinity(anti=[term(WEB, HOST, matchLabelKeys=["rev"])]),
            ),
            {"a1": "ok", "a2": "ok", "b1": ANTI, "x1": "ok"},
            id="matchLabelKeys adds rev in (2)",
        ),
        pytest.param(
            zones(),
            [
                mk_pod("w1", "a1", {"app": "web", "tenant": "x"}),
                mk_pod("w2", "b1", {"app": "web", "tenant": "y"}),
            ],
            mk_pod(
                "new",
                labels={"app": "web", "tenant": "x"},
                affinity=affinity(anti=[term(WEB, HOST, mismatchLabelKeys=["tenant"])]),
            ),
            {"a1": "ok", "a2": "ok", "b1": ANTI, "x1": "ok"},
            id="mismatchLabelKeys adds tenant notin (x)",
        ),
    ],
)
def test_filter(nodes: list[Any], existing: list[Any], incoming: Any, want: dict[str, str]) -> None:
    pl = plugin(InterPodAffinity, mk_snapshot(nodes, existing))
    pre, statuses = filter_all(pl, incoming)
    assert pre.code == Code.SUCCESS
    assert verdicts(statuses) == want


def test_namespace_selector_resolves_against_namespace_labels() -> None:
    nss = [
        {"kind": "Namespace", "metadata": {"name": "team-a", "labels": {"tier": "prod"}}},
        {"kind": "Namespace", "metadata": {"name": "team-b", "labels": {"tier": "dev"}}},
    ]
    existing = [mk_pod("w1", "a1", WEB, namespace="team-a"), mk_pod("w2", "b1", WEB, namespace="team-b")]
    snap = mk_snapshot(zones(), existing, {"Namespace": nss})
    pl = plugin(InterPodAffinity, snap)
    sel = {"matchLabels": {"tier": "prod"}}
    _, st = filter_all(
        pl, mk_pod("new", labels=WEB, affinity=affinity(anti=[term(WEB, HOST, namespaceSelector=sel)]))
    )
    assert verdicts(st) == {"a1": ANTI, "a2": "ok", "b1": "ok", "x1": "ok"}
    assert st["a1"].details[0]["pods"] == ["team-a/w1"]


def test_skip_when_nothing_applies() -> None:
    pl = plugin(InterPodAffinity, mk_snapshot(zones(), [mk_pod("w1", "a1", WEB)]))
    pre, _ = filter_all(pl, mk_pod("new", labels=WEB))
    assert pre.code == Code.SKIP


def test_add_and_remove_pod() -> None:
    snap = mk_snapshot(zones(), [mk_pod("w1", "a1", WEB)])
    pl = plugin(InterPodAffinity, snap)
    incoming = mk_pod("new", labels=WEB, affinity=affinity(anti=[term(WEB, HOST)]))
    state = CycleState()
    pl.pre_filter(state, incoming)
    a1, b1 = snap.node_info_by_name["a1"], snap.node_info_by_name["b1"]

    removed = state.clone()
    pl.remove_pod(removed, incoming, a1.pods[0], a1)
    assert pl.filter(removed, incoming, a1).ok
    assert pl.filter(state, incoming, a1).code == Code.UNSCHEDULABLE

    added = state.clone()
    guard = mk_pod("guard", "b1", {"app": "db"}, affinity=affinity(anti=[term(WEB, HOST)]))
    pl.add_pod(added, incoming, guard, b1)
    assert verdicts({"b1": pl.filter(added, incoming, b1)}) == {"b1": EXISTING}
    assert pl.filter(state, incoming, b1).ok


def test_preferred_terms_score_and_normalize_truncates() -> None:
    nodes = [mk_node("n1", "a"), mk_node("n2", "b"), mk_node("n3", "c")]
    existing = [
        mk_pod("m1", "n1", CACHE),
        mk_pod("m2", "n2", CACHE),
        mk_pod("m3", "n2", CACHE),
        mk_pod("s1", "n2", {"app": "search"}),
    ]
    pl = plugin(InterPodAffinity, mk_snapshot(nodes, existing))
    incoming = mk_pod(
        "new",
        labels=WEB,
        affinity=preferred(aff=[(3, term(CACHE, HOST))], anti=[(2, term({"app": "search"}, HOST))]),
    )
    # Raw: n1 = 3, n2 = 3+3-2 = 4, n3 = 0. Normalized float 100·(s−0)/4 truncated: 75, 100, 0.
    assert scores(pl, incoming) == {"n1": 75, "n2": 100, "n3": 0}


@pytest.mark.parametrize(
    ("args", "want"),
    [
        # n1: storefront's required term matches (hard weight 1); n2: checkout's preferred weight 5.
        pytest.param({}, {"n1": 20, "n2": 100, "n3": 0}, id="default hardPodAffinityWeight 1"),
        pytest.param(
            {"hardPodAffinityWeight": 10}, {"n1": 100, "n2": 50, "n3": 0}, id="hardPodAffinityWeight 10"
        ),
        pytest.param(
            {"hardPodAffinityWeight": 0}, {"n1": 0, "n2": 100, "n3": 0}, id="weight 0 ignores required terms"
        ),
        pytest.param(
            {"ignorePreferredTermsOfExistingPods": True}, None, id="ignorePreferredTermsOfExistingPods skips"
        ),
    ],
)
def test_existing_pods_terms_and_args(args: dict[str, Any], want: dict[str, int] | None) -> None:
    nodes = [mk_node("n1", "a"), mk_node("n2", "b"), mk_node("n3", "c")]
    existing = [
        mk_pod("storefront", "n1", WEB, affinity=affinity([term(CACHE, HOST)])),
        mk_pod("checkout", "n2", {"app": "checkout"}, affinity=preferred(aff=[(5, term(CACHE, HOST))])),
    ]
    pl = plugin(InterPodAffinity, mk_snapshot(nodes, existing), args)
    assert scores(pl, mk_pod("session-cache-0", labels=CACHE)) == want


def test_prescore_skips_when_no_term_touches_any_node() -> None:
    pl = plugin(InterPodAffinity, mk_snapshot(zones(), [mk_pod("w1", "a1", WEB)]))
    assert scores(pl, mk_pod("new", labels=WEB, affinity=preferred(aff=[(1, term(CACHE))]))) is None
