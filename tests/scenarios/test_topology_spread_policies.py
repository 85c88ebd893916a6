"""PodTopologySpread inclusion policies, minDomains and nodes lacking the key, next to taints and selectors.

Derived from podtopologyspread/filtering.go (v1.31.8 and v1.34.1 agree): PreFilter counts matching pods per
domain over nodes that have every constraint key and pass `nodeAffinityPolicy` (default Honor: the pod's
nodeSelector/required affinity) and `nodeTaintsPolicy` (default Ignore; Honor drops nodes whose NoSchedule/
NoExecute taints the pod does not tolerate). globalMin is 0 when fewer than minDomains domains exist. Filter
rejects a node without the key with UU `(missing required label)`, else U when
count + selfMatch - globalMin > maxSkew. TaintToleration and NodeAffinity run earlier and win on their nodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scenarios.helpers import diagnose_all, node, pod, scenario

ZONE = "topology.kubernetes.io/zone"
WEB = {"app": "web"}
TAINT = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
TOLERATE = [{"key": "dedicated", "operator": "Exists"}]


def _spread(**kw: Any) -> list[dict[str, Any]]:
    c = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": WEB},
    }
    c.update(kw)
    return [c]


# zones a, b, c (c tainted), and n4 without a zone; one web pod in a and one in b.
OBJS = [
    node("n1", labels={ZONE: "a"}),
    node("n2", labels={ZONE: "b"}),
    node("n3", labels={ZONE: "c"}, taints=TAINT),
    node("n4"),
    pod("w1", node_name="n1", labels=WEB),
    pod("w2", node_name="n2", labels=WEB),
    pod("honor", labels=WEB, topologySpreadConstraints=_spread(nodeTaintsPolicy="Honor")),
    pod("ignore", labels=WEB, topologySpreadConstraints=_spread()),
    pod("tolerant", labels=WEB, tolerations=TOLERATE, topologySpreadConstraints=_spread()),
    pod(
        "min-domains",
        labels=WEB,
        tolerations=TOLERATE,
        topologySpreadConstraints=_spread(minDomains=4, maxSkew=2),
    ),
    pod(
        "affinity-ignore",
        labels=WEB,
        nodeSelector={ZONE: "a"},
        topologySpreadConstraints=_spread(nodeAffinityPolicy="Ignore"),
    ),
    pod("affinity-honor", labels=WEB, nodeSelector={ZONE: "a"}, topologySpreadConstraints=_spread()),
]
MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
SKEW = "node(s) didn't match pod topology spread constraints"


@pytest.mark.parametrize(
    ("name", "feasible", "message"),
    [
        pytest.param(
            "honor",
            ["n1", "n2"],
            None,
            id="taints Honor: zone c is no domain, so the minimum is 1 and a, b fit",
        ),
        pytest.param(
            "ignore",
            [],
            f"0/4 nodes are available: 1 {MISSING}, 1 node(s) had untolerated taint {{dedicated: x}}, 2 {SKEW}. "
            "no new claims to deallocate, preemption: 0/4 nodes are available: "
            "2 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
            id="taints Ignore: empty zone c makes the minimum 0; n4 lacks the key (UU)",
        ),
        pytest.param("tolerant", ["n3"], None, id="a tolerating pod can use the empty zone"),
        pytest.param(
            "min-domains",
            ["n1", "n2", "n3"],
            None,
            id="minDomains 4 > 3 domains: minimum 0, maxSkew 2 fits all",
        ),
        pytest.param(
            "affinity-ignore",
            [],
            f"0/4 nodes are available: 1 {SKEW}, 1 node(s) had untolerated taint {{dedicated: x}}, "
            "2 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: "
            "0/4 nodes are available: 1 No preemption victims found for incoming pod, "
            "3 Preemption is not helpful for scheduling.",
            id="nodeAffinityPolicy Ignore: zones outside the selector still set the minimum (0)",
        ),
        pytest.param("affinity-honor", ["n1"], None, id="nodeAffinityPolicy Honor: only zone a is a domain"),
    ],
)
def test_inclusion_policies(tmp_path: Path, name: str, feasible: list[str], message: str | None) -> None:
    d = diagnose_all(tmp_path, scenario(*OBJS), "v1.34.1")[f"default/{name}"]
    assert sorted(d.feasible) == feasible
    assert d.message == message
