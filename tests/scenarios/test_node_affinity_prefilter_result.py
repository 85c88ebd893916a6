"""NodeAffinity's PreFilterResult (matchFields metadata.name) together with nodeSelector, unknown node names,
and the count of nodes outside the result in v1.31 versus v1.32+.

Derived from nodeaffinity/node_affinity.go PreFilter (the union of the terms' `metadata.name In` sets; a term
without one means all nodes) and schedule_one.go findNodesThatFitPod: only the named nodes that exist are
filtered; from v1.32 the others get the absent status `node(s) didn't satisfy plugin(s) [NodeAffinity]` (UU)
and are counted in the histogram, in v1.31 they have no status and are not counted. Preemption marks them
`Preemption is not helpful for scheduling` in every version (v1.31: `!ok` in nodesWherePreemptionMightHelp).
The nodeSelector is still checked by Filter on the named nodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scenarios.helpers import diagnose, node, pod, scenario


def _pinned(*names: str) -> dict[str, Any]:
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in names]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


NODES = (
    node("a", labels={"pool": "x"}),
    node("b", labels={"pool": "y"}),
    node("c", labels={"pool": "y"}, cpu="1"),
)
CASES = {
    "ghost": pod("p", cpu="2", affinity=_pinned("ghost")),
    "selector-excludes-pinned": pod("p", cpu="2", affinity=_pinned("a"), nodeSelector={"pool": "y"}),
    "pinned-full": pod("p", cpu="2", priority=10, affinity=_pinned("c")),
    "two-terms": pod("p", cpu="2", affinity=_pinned("a", "c"), nodeSelector={"pool": "y"}),
}
NA = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
SEL = "node(s) didn't match Pod's node affinity/selector"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


@pytest.mark.parametrize(
    ("case", "version", "want"),
    [
        pytest.param(
            "ghost",
            "v1.31.8",
            f"0/3 nodes are available: preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}.",
            id="v1.31: a pin to a missing node filters nothing and counts nothing",
        ),
        pytest.param(
            "ghost",
            "v1.32.2",
            f"0/3 nodes are available: 3 {NA}. preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}.",
            id="v1.32: every node is outside the result",
        ),
        pytest.param(
            "selector-excludes-pinned",
            "v1.31.8",
            f"0/3 nodes are available: 1 {SEL}. preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}.",
            id="v1.31: the pinned node fails the nodeSelector; the others are not counted",
        ),
        pytest.param(
            "selector-excludes-pinned",
            "v1.34.1",
            f"0/3 nodes are available: 1 {SEL}, 2 {NA}. no new claims to deallocate, "
            f"preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}.",
            id="v1.34: the nodeSelector still applies on the pinned node",
        ),
        pytest.param(
            "pinned-full",
            "v1.31.8",
            f"0/3 nodes are available: 1 Insufficient cpu. preemption: 0/3 nodes are available: 1 {NO_VICTIMS}, "
            f"2 {NOT_HELPFUL}.",
            id="v1.31: DaemonSet-style pod on a too-small node: U, a candidate",
        ),
        pytest.param(
            "pinned-full",
            "v1.33.3",
            f"0/3 nodes are available: 1 Insufficient cpu, 2 {NA}. preemption: 0/3 nodes are available: "
            f"1 {NO_VICTIMS}, 2 {NOT_HELPFUL}.",
            id="v1.33: outside nodes counted; the too-small node still U",
        ),
        pytest.param(
            "pinned-full",
            "v1.34.1",
            f"0/3 nodes are available: 1 Insufficient cpu, 2 {NA}. no new claims to deallocate, "
            f"preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}.",
            id="v1.34: the too-small node is UU too",
        ),
        pytest.param(
            "two-terms",
            "v1.32.2",
            f"0/3 nodes are available: 1 Insufficient cpu, 1 {SEL}, 1 {NA}. preemption: 0/3 nodes are available: "
            f"1 {NO_VICTIMS}, 2 {NOT_HELPFUL}.",
            id="two pinned terms: the union {a, c} is filtered, b alone is outside",
        ),
    ],
)
def test_prefilter_result_counts(tmp_path: Path, case: str, version: str, want: str) -> None:
    d = diagnose(tmp_path, scenario(*NODES, CASES[case]), "default/p", version)
    assert d.message == want


def test_a_term_without_match_fields_means_all_nodes(tmp_path: Path) -> None:
    """Terms are ORed: one term without `metadata.name` makes PreFilter return no result (all nodes)."""
    affinity = _pinned("a")
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    terms.append({"matchExpressions": [{"key": "pool", "operator": "In", "values": ["y"]}]})
    d = diagnose(tmp_path, scenario(*NODES, pod("p", cpu="500m", affinity=affinity)), "default/p")
    assert d.prefilter_node_names is None
    assert sorted(d.feasible) == ["a", "b", "c"]
