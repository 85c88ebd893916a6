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
    assert tol.safety == "risky"  # dedicated=batch reserves node-b for batch workloads
    assert any("control-plane:NoSchedule" in n and "never a remedy" in n for n in notes)


def test_toleration_targets_the_deployment_template() -> None:
    remedies, _ = remedies_for(
        "golden/cluster-eks-three-nodegroups.yaml", "default/search-ranker-5f9c7d8b6-c2kxm"
    )
    (tol,) = by_kind(remedies, "toleration")
    assert tol.target == "Deployment default/search-ranker"
    assert "  template:\n    spec:\n      tolerations:" in tol.patch
    assert tol.unblocks == ["ip-10-0-1-80.ec2.internal", "ip-10-0-2-81.ec2.internal"]


def test_a_cpu_pod_is_never_told_to_tolerate_the_gpu_taint() -> None:
    # default/big asks for 12 cpu and no GPU: gpu-1 (16 cpu, nvidia.com/gpu=true:NoSchedule) would fit it
    # tolerated, but the taint reserves accelerator nodes: ruled out, with the reason.
    remedies, notes = remedies_for("remedies/no-pool-fits.yaml", "default/big")
    assert by_kind(remedies, "toleration") == []
    assert (
        "toleration: never a remedy: tolerating nvidia.com/gpu=true:NoSchedule on node gpu-1: it reserves "
        "accelerator nodes for pods that request the hardware, and this pod requests none"
    ) in notes
