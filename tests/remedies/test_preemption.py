"""Preemption: nominated node and victims when it would preempt; why not otherwise."""

from __future__ import annotations

import pytest

from tests.remedies.helpers import by_kind, remedies_for


def test_preemption_with_pdb_violation_ranks_first() -> None:
    remedies, _ = remedies_for("golden/preemption-pdb-violated-when-unavoidable.yaml", "default/payments-0")
    assert remedies[0].kind == "preemption"
    pre = remedies[0]
    assert pre.unblocks == ["worker-1"]
    assert pre.details["victims"] == [
        {"pod": "default/orders-6c7d8f9b5-xwbzn", "priority": 0, "pdb": "violates its PodDisruptionBudget"}
    ]
    assert "deleting 1 of the 1 victim(s) violates their PodDisruptionBudget" in pre.risk


@pytest.mark.parametrize(
    ("scenario", "pod", "note"),
    [
        pytest.param(
            "golden/preemption-policy-never.yaml",
            "default/data-science-notebook",
            "preemption: not possible: the pod has preemptionPolicy: Never",
            id="preemptionPolicy Never",
        ),
        pytest.param(
            "golden/preemption-no-eligible-victims.yaml",
            "default/same-priority",
            "preemption: not possible: no running pod has a priority below the pod's (1000)",
            id="no lower-priority pods",
        ),
        pytest.param(
            "golden/preemption-no-eligible-victims.yaml",
            "default/too-big",
            "preemption: not helpful: all 2 node(s) reject the pod",
            id="only unresolvable nodes",
        ),
    ],
)
def test_why_no_preemption(scenario: str, pod: str, note: str) -> None:
    remedies, notes = remedies_for(scenario, pod)
    assert by_kind(remedies, "preemption") == []
    assert any(n.startswith(note) for n in notes), notes
