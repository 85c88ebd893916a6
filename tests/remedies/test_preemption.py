"""Preemption: nominated node and victims when it would preempt; why not otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.remedies.helpers import FIXTURES, by_kind, remedies_for


def test_preemption_with_pdb_violation_ranks_first() -> None:
    remedies, _ = remedies_for("golden/preemption-pdb-violated-when-unavoidable.yaml", "default/payments-0")
    assert remedies[0].kind == "preemption"
    pre = remedies[0]
    assert pre.unblocks == ["worker-1"]
    assert pre.details["victims"] == [
        {"pod": "default/orders-6c7d8f9b5-xwbzn", "priority": 0, "pdb": "violates its PodDisruptionBudget"}
    ]
    assert "deleting 1 of the 1 victim(s) violates their PodDisruptionBudget" in pre.risk


SUCCESS = FIXTURES / "golden/features/preemption-success-message.yaml"
WEB_PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {"maxUnavailable": 3, "selector": {"matchLabels": {"app": "web"}}},
    "status": {"disruptionsAllowed": 3, "currentHealthy": 3, "desiredHealthy": 0, "expectedPods": 3},
}


def _victims(path: Path) -> tuple[list[dict[str, object]], str]:
    remedies, _ = remedies_for(str(path), "default/batch-1cpu")
    (pre,) = by_kind(remedies, "preemption")
    return pre.details["victims"], pre.risk


def test_victims_no_pdb_covers_are_not_said_to_be_within_a_budget() -> None:
    # shop/web-* have no PDB (only shop/api has one): "within PDB budget" read as if one protected them.
    victims, risk = _victims(SUCCESS)
    assert {v["pdb"] for v in victims} == {"no PodDisruptionBudget"}
    assert "no victim's PodDisruptionBudget is violated" in risk


def test_victims_a_pdb_allows_to_go_say_so(tmp_path: Path) -> None:
    docs = [*yaml.safe_load_all(SUCCESS.read_text()), WEB_PDB]
    path = tmp_path / "with-web-pdb.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    victims, _ = _victims(path)
    assert {v["pdb"] for v in victims} == {"its PodDisruptionBudget allows it"}


def test_without_any_pdb_in_the_input_the_budget_is_not_checked(tmp_path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(SUCCESS.read_text()) if d.get("kind") != "PodDisruptionBudget"]
    path = tmp_path / "no-pdbs.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    victims, risk = _victims(path)
    assert {v["pdb"] for v in victims} == {"PodDisruptionBudgets not in the input"}
    assert "the input has no PodDisruptionBudgets: whether a victim is protected was not checked" in risk


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


def test_without_nodes_preemption_is_not_discussed() -> None:
    # "no running pod has a priority below the pod's" was beside the point: there is no node at all.
    remedies, notes = remedies_for("golden/edge-zero-nodes.yaml", "default/hello-5f7d6c8b9-8nq2w")
    assert remedies == []
    assert not [n for n in notes if n.startswith("preemption:")]
