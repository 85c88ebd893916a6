"""NodeResourcesBalancedAllocation: the std formula, resources args, zero-request skip per release."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.noderesources.balanced_allocation import BalancedAllocation
from kdiagnose.versions import dialect_for
from tests.plugins.basic_factories import container, handle, node, pod, snapshot

ALLOC = {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "100Gi", "pods": "110"}


@pytest.mark.parametrize(
    ("args", "req", "want"),
    [
        # cpu (1+1)/4 = 0.5, memory (1+1)/8 = 0.25: std 0.125, (1-0.125)*100 = 87.5 -> 87.
        pytest.param({}, {"cpu": "1", "memory": "1Gi"}, 87, id="two resources"),
        # 0.5, 0.25, 0.5: population std 0.1179 -> 88.
        pytest.param(
            {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "ephemeral-storage"}]},
            {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "50Gi"},
            88,
            id="three resources use the population std",
        ),
        # cpu 5/4 capped at 1, memory 0.25: std 0.375 -> 62.
        pytest.param({}, {"cpu": "4", "memory": "1Gi"}, 62, id="fractions are capped at one"),
        # cpu only: no std, 100.
        pytest.param({"resources": [{"name": "cpu", "weight": 1}]}, {"cpu": "1"}, 100, id="one resource"),
    ],
)
def test_score(args: dict[str, Any], req: dict[str, str], want: int) -> None:
    bound = pod("b", node="n1", containers=[container(requests={"cpu": "1", "memory": "1Gi"})])
    snap = snapshot([node("n1", allocatable=ALLOC)], [bound])
    pl = BalancedAllocation(handle(snap, args))
    p = pod(containers=[container(requests=req)])
    state = CycleState()
    assert pl.pre_score(state, p, snap.node_infos).ok
    assert pl.score(state, p, snap.node_infos[0])[0] == want


@pytest.mark.parametrize(
    ("version", "skips"),
    [
        pytest.param("v1.34.1", True, id="v1.34 skips pods that request nothing"),
        pytest.param("v1.33.3", True, id="v1.33 skips too"),
        pytest.param("v1.32.2", False, id="v1.32 scores them"),
    ],
)
def test_zero_request_pods(version: str, skips: bool) -> None:
    dialect = dialect_for(version)
    snap = snapshot([node("n1", allocatable=ALLOC)], dialect=dialect)
    pl = BalancedAllocation(handle(snap))
    p = pod(dialect=dialect)
    state = CycleState()
    assert (pl.pre_score(state, p, snap.node_infos).code == Code.SKIP) is skips
    if not skips:
        # Real requests (no non-zero defaults): both fractions 0, score 100.
        assert pl.score(state, p, snap.node_infos[0])[0] == 100
