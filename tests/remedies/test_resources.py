"""Right-size: the largest request that fits, verified by replay."""

from __future__ import annotations

import pytest

from kdiagnose.remedies.resources import round_down
from tests.remedies.helpers import by_kind, remedies_for


@pytest.mark.parametrize(
    ("scenario", "pod", "summary", "unblocks", "safety"),
    [
        pytest.param(
            "golden/seed-hello-web.yaml",
            "default/hello-web-new",
            "cpu <= 500m (now cpu 1): a cut of cpu by 50%",
            ["node-a", "node-c"],
            "risky",  # half of what the workload asked for
            id="seed: cpu to 500m",
        ),
        pytest.param(
            "golden/cluster-eks-three-nodegroups.yaml",
            "default/search-ranker-5f9c7d8b6-c2kxm",
            # 6Gi = 6144Mi; 6144Mi - 4291Mi = 1853Mi = 30.2% of it
            "memory <= 4291Mi (now memory 6Gi): a cut of memory by 30%; its other requests (cpu 1) stay",
            ["ip-10-0-1-40.ec2.internal", "ip-10-0-2-41.ec2.internal", "ip-10-0-3-42.ec2.internal"],
            "risky",
            id="memory rounded down to whole Mi",
        ),
        pytest.param(
            "remedies/no-pool-fits.yaml",
            "default/big",
            "cpu <= 4 (now cpu 12): a cut of cpu by 67%",
            ["gen-1"],
            "risky",
            id="a whole node's cpu",
        ),
    ],
)
def test_right_size(scenario: str, pod: str, summary: str, unblocks: list[str], safety: str) -> None:
    remedies, _ = remedies_for(scenario, pod)
    (rs,) = by_kind(remedies, "right-size")
    assert rs.summary.endswith(summary)
    assert rs.unblocks == unblocks
    assert rs.safety == safety


@pytest.mark.parametrize(
    ("resource", "amount", "expected"),
    [
        pytest.param("memory", 3 * 2**20 + 5, 3 * 2**20, id="memory rounds down to Mi"),
        pytest.param("cpu", 1234, 1234, id="cpu keeps millicores"),
        pytest.param("memory", 1000, 1000, id="less than a Mi stays"),
    ],
)
def test_round_down(resource: str, amount: int, expected: int) -> None:
    assert round_down(resource, amount) == expected


def test_device_counts_are_never_right_sized() -> None:
    # vision-trainer-0 asks 2 nvidia.com/gpu; the L4 nodes have 1 each: halving a GPU job is no fix.
    remedies, notes = remedies_for("golden/cluster-gke-large-mixed.yaml", "ml/vision-trainer-0")
    assert not by_kind(remedies, "right-size")
    assert any(n.startswith("right-size: not suggested for nvidia.com/gpu") for n in notes)
