"""Add a toleration: the exact YAML, the nodes it unblocks, what still blocks."""

from __future__ import annotations

from tests.remedies.helpers import by_kind, remedies_for


def test_seed_toleration_for_dedicated_batch() -> None:
    remedies, notes = remedies_for("golden/seed-hello-web.yaml", "default/hello-web-new")
    (tol,) = by_kind(remedies, "toleration")
    assert tol.unblocks == ["node-b"]
    assert tol.patch.splitlines()[1:] == [
        "spec:",
        "  tolerations:",
        "  - key: dedicated",
        "    operator: Equal",
        "    value: batch",
        "    effect: NoSchedule",
    ]
    assert any("control-plane:NoSchedule" in n and "not suggested" in n for n in notes)


def test_toleration_targets_the_deployment_template() -> None:
    remedies, _ = remedies_for(
        "golden/cluster-eks-three-nodegroups.yaml", "default/search-ranker-5f9c7d8b6-c2kxm"
    )
    (tol,) = by_kind(remedies, "toleration")
    assert tol.target == "Deployment default/search-ranker"
    assert "  template:\n    spec:\n      tolerations:" in tol.patch
    assert tol.unblocks == ["ip-10-0-1-80.ec2.internal", "ip-10-0-2-81.ec2.internal"]


def test_toleration_that_would_not_help_is_a_note() -> None:
    # The gpu node tolerated still lacks nothing: it has 16 CPU, so the toleration is shown; the general
    # pool's node has no taint, so no toleration is suggested for it.
    remedies, _ = remedies_for("remedies/no-pool-fits.yaml", "default/big")
    assert [r.unblocks for r in by_kind(remedies, "toleration")] == [["gpu-1"]]
