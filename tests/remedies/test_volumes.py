"""Volumes: the PV's zone, the nodes that satisfy it, a pool scaled into that zone."""

from __future__ import annotations

from tests.remedies.helpers import by_kind, remedies_for

CASE = "golden/cluster-statefulset-zonal-pv-wrong-zone.yaml"
PV = "pvc-6e5d4c3b-2a1f-4e0d-9c8b-7a6f5e4d3c2b"


def test_pv_zone_mismatch_is_explained() -> None:
    _, notes = remedies_for(CASE, "db/postgres-0")
    assert (
        f"volume: PV {PV} restricts the pod to zone us-east-1a, and no node of the cluster is there" in notes
    )


def test_pool_scaled_into_the_pv_zone() -> None:
    remedies, _ = remedies_for(CASE, "db/postgres-0")
    (vol,) = by_kind(remedies, "volume")
    assert vol.summary.startswith("scale node pool db by 1 in zone us-east-1a")
    assert vol.unblocks == ["db-simulated-1"]
    assert "only if the pool can launch nodes in us-east-1a" in vol.risk
