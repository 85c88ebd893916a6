"""Relax affinity: node affinity, nodeSelector, pod anti-affinity, topology spread."""

from __future__ import annotations

import pytest

from tests.remedies.helpers import by_kind, remedies_for


@pytest.mark.parametrize(
    ("scenario", "pod", "unblocks", "in_summary", "in_patch"),
    [
        pytest.param(
            "golden/seed-hello-web.yaml",
            "default/hello-web-new",
            ["node-d"],
            "turn the required node affinity into a preferred one",
            "requiredDuringSchedulingIgnoredDuringExecution: null",
            id="a required node affinity becomes preferred",
        ),
        pytest.param(
            "golden/cluster-eks-three-nodegroups.yaml",
            "default/search-ranker-5f9c7d8b6-c2kxm",
            ["ip-10-0-2-120.ec2.internal", "ip-10-0-3-121.ec2.internal"],
            "replace nodeSelector eks.amazonaws.com/capacityType=ON_DEMAND",
            "eks.amazonaws.com/capacityType: null",
            id="a nodeSelector key becomes a preferred node affinity",
        ),
        pytest.param(
            "remedies/anti-affinity-replicas.yaml",
            "default/web-7d9f-p1",
            ["web-1"],
            "podAntiAffinity term #1",
            "podAffinityTerm:",
            id="a required anti-affinity term becomes preferred",
        ),
        pytest.param(
            "remedies/spread-zones.yaml",
            "default/api-new",
            ["b-1"],
            "whenUnsatisfiable: ScheduleAnyway",
            "whenUnsatisfiable: ScheduleAnyway",
            id="a DoNotSchedule spread constraint becomes ScheduleAnyway",
        ),
    ],
)
def test_relaxation(scenario: str, pod: str, unblocks: list[str], in_summary: str, in_patch: str) -> None:
    remedies, _ = remedies_for(scenario, pod)
    (relax,) = by_kind(remedies, "relax-affinity")
    assert relax.unblocks == unblocks
    assert in_summary in relax.summary
    assert in_patch in relax.patch
    assert relax.safety == "risky" and relax.risk  # every relaxation is risky, with a sentence saying how


def test_a_relaxed_node_rule_names_where_the_pod_would_then_run() -> None:
    # The generic "it may land on nodes the rule was written to avoid" says nothing an on-call engineer can
    # check: the risk names the node and its value of the rule's label.
    remedies, _ = remedies_for("demo/cluster.yaml", "default/hello-web-new")
    (relax,) = by_kind(remedies, "relax-affinity")
    assert relax.risk.endswith("; it would then run on node-d (workload=batch)")
