"""InterPodAffinity: namespaceSelector on Namespace labels, existing pods' anti-affinity across namespaces, the
first-pod exception with several terms, and preemption of the pod holding an anti-affinity.

Derived from interpodaffinity/filtering.go (v1.34.1): affinity counts only existing pods that match ALL the
incoming pod's required affinity terms (updateWithAffinityTerms), on nodes that have the term's key. With no
count at all and the pod matching all its own terms, any node with every topology key passes. Existing pods'
required anti-affinity is evaluated with their own namespaceSelector against the incoming pod's Namespace
labels. Filter order: affinity (UU), own anti-affinity (U), existing pods' anti-affinity (U).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scenarios.helpers import diagnose, diagnose_all, node, pod, scenario

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _ns(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **labels}},
    }


def _anti(sel: dict[str, str], key: str = HOST, ns_selector: dict[str, Any] | None = None) -> dict[str, Any]:
    term: dict[str, Any] = {"labelSelector": {"matchLabels": sel}, "topologyKey": key}
    if ns_selector is not None:
        term["namespaceSelector"] = ns_selector
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _aff(*terms: tuple[dict[str, str], str]) -> dict[str, Any]:
    req = [{"labelSelector": {"matchLabels": s}, "topologyKey": k} for s, k in terms]
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": req}}


def _namespaced() -> str:
    return scenario(
        _ns("default"),
        _ns("team-a", team="a"),
        _ns("team-b", team="b"),
        node("n1", labels={ZONE: "a"}),
        node("n2", labels={ZONE: "a"}),
        node("n3", labels={ZONE: "b"}),
        # guard (team-a) keeps app=web pods of team=b namespaces out of its whole zone.
        pod(
            "guard",
            namespace="team-a",
            node_name="n1",
            cpu="100m",
            labels={"app": "guard"},
            affinity=_anti({"app": "web"}, ZONE, {"matchLabels": {"team": "b"}}),
        ),
        pod("web-0", namespace="team-b", node_name="n3", cpu="100m", labels={"app": "web"}),
        pod(
            "web-1",
            namespace="team-b",
            cpu="100m",
            priority=100,
            labels={"app": "web"},
            affinity=_anti({"app": "web"}),
        ),
        pod(
            "web-2",
            namespace="default",
            cpu="100m",
            labels={"app": "web"},
            affinity=_anti({"app": "web"}, ns_selector={}),
        ),
    )


def test_existing_anti_affinity_uses_namespace_labels(tmp_path: Path) -> None:
    r = diagnose_all(tmp_path, _namespaced(), "v1.34.1")
    web1 = r["team-b/web-1"]
    assert web1.message == (
        "0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, "
        "2 node(s) didn't satisfy existing pods anti-affinity rules."
    )
    # Both rejections are U: evicting guard (zone a) or web-0 (n3) helps; they tie on every criterion and
    # neither has a start time, so upstream picks either at random; the replay takes the first.
    assert web1.preemption is not None
    assert web1.preemption.nominated_node in ("n1", "n3")
    # default is not a team=b namespace; its own `namespaceSelector: {}` sees web-0 in team-b on n3.
    assert sorted(r["default/web-2"].feasible) == ["n1", "n2"]


BASE = (node("n1", labels={ZONE: "a"}), node("n2", labels={ZONE: "b"}), node("n3"))
TWO_TERMS = _aff(({"app": "web"}, ZONE), ({"tier": "x"}, HOST))


@pytest.mark.parametrize(
    ("extra", "feasible"),
    [
        pytest.param(
            [pod("p", labels={"app": "web", "tier": "x"}, affinity=TWO_TERMS)],
            ["n1", "n2"],
            id="the pod matches both its terms and nothing else does: nodes with both keys pass",
        ),
        pytest.param(
            [pod("p", labels={"app": "web"}, affinity=TWO_TERMS)],
            [],
            id="the pod matches only one of its terms: no exception",
        ),
        pytest.param(
            [
                pod("t", node_name="n2", labels={"tier": "x"}),
                pod("p", labels={"app": "web", "tier": "x"}, affinity=TWO_TERMS),
            ],
            ["n1", "n2"],
            id="a pod matching one term only is not counted, so the exception still applies",
        ),
        pytest.param(
            [
                pod("t", node_name="n1", labels={"app": "web", "tier": "x"}),
                pod("p", labels={"app": "web", "tier": "x"}, affinity=TWO_TERMS),
            ],
            ["n1"],
            id="a pod matching both terms is counted: only its zone and host",
        ),
        pytest.param(
            [
                pod("t", node_name="n3", labels={"app": "web"}),
                pod("p", labels={"app": "web"}, affinity=_aff(({"app": "web"}, ZONE))),
            ],
            ["n1", "n2"],
            id="a match on a node without the topology key is not counted",
        ),
        pytest.param(
            [
                pod("t", namespace="kube-system", node_name="n1", labels={"app": "web"}),
                pod("p", labels={"app": "web"}, affinity=_aff(({"app": "web"}, ZONE))),
            ],
            ["n1", "n2"],
            id="a match in another namespace is not counted (own namespace by default)",
        ),
    ],
)
def test_first_pod_exception(tmp_path: Path, extra: list[dict[str, Any]], feasible: list[str]) -> None:
    d = diagnose(tmp_path, scenario(*BASE, *extra), "default/p")
    assert sorted(d.feasible) == feasible
    if not feasible:
        assert d.message == (
            "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. no new claims to deallocate, "
            "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        )
