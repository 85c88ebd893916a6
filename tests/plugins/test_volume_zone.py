"""VolumeZone: bound PVs' zone/region labels against node labels, and its PreFilter errors."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, notes_of
from kdiagnose.scheduler.plugins.volumezone.volume_zone import VolumeZone
from tests.plugins.volume_factories import (
    make,
    node,
    pod,
    pv,
    pvc,
    pvc_vol,
    run,
    snapshot,
    storage_class,
    verdicts,
)

CONFLICT = "node(s) had no available volume zone"
ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


@pytest.mark.parametrize(
    ("pv_labels", "node_labels", "expect"),
    [
        pytest.param({ZONE: "a"}, {ZONE: "a"}, "ok", id="same zone passes"),
        pytest.param({ZONE: "a"}, {ZONE: "b"}, CONFLICT, id="other zone fails"),
        pytest.param({ZONE: "a__b"}, {ZONE: "b"}, "ok", id="multi-zone label lists the node's zone"),
        pytest.param({ZONE: "a"}, {}, "ok", id="node without topology labels passes"),
        pytest.param({ZONE: "a"}, {REGION: "r"}, CONFLICT, id="node with only a region lacks the zone key"),
        pytest.param({BETA_ZONE: "a"}, {ZONE: "a"}, "ok", id="beta PV label matches the GA node label"),
        pytest.param(
            {BETA_ZONE: "a"},
            {BETA_ZONE: "b", ZONE: "a"},
            CONFLICT,
            id="the beta node label wins when present",
        ),
        pytest.param({ZONE: "a__"}, {ZONE: "b"}, "skip", id="unparsable label is ignored"),
        pytest.param(
            {REGION: "r1", ZONE: "a"}, {REGION: "r2", ZONE: "a"}, CONFLICT, id="region mismatch fails"
        ),
    ],
)
def test_zone_match(pv_labels: dict[str, str], node_labels: dict[str, str], expect: str) -> None:
    objs = [pvc("c", volume="v", bound=True), pv("v", labels=pv_labels, phase="Bound")]
    snap = snapshot([node("n1", node_labels)], [], objs)
    _, pre, per_node = run(make(VolumeZone, snap), pod("new", volumes=[pvc_vol("c")]))
    if expect == "skip":
        assert pre.code == Code.SKIP
        return
    assert pre.ok
    assert verdicts(per_node) == {"n1": expect}
    if expect != "ok":
        assert per_node["n1"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("objects", "reason", "note"),
    [
        pytest.param(
            [pvc("c", volume="pv-gone", bound=True), storage_class()],
            'persistentvolume "pv-gone" not found',
            "not checked: the input has no PersistentVolumes",
            id="bound to a missing PV",
        ),
        pytest.param([], 'persistentvolumeclaim "c" not found', None, id="missing claim"),
        pytest.param(
            [pvc("c", sc=None)],
            "PersistentVolumeClaim had no pv name and storageClass name",
            None,
            id="no PV, no class",
        ),
        pytest.param(
            [pvc("c"), storage_class(mode="Immediate")],
            "PersistentVolume had no name",
            None,
            id="unbound immediate claim",
        ),
        pytest.param(
            [pvc("c"), storage_class(mode=None)],
            "PersistentVolume had no name",
            None,
            id="unset mode defaults to Immediate",
        ),
        pytest.param(
            [pvc("c", sc="missing"), storage_class()],
            'storageclass.storage.k8s.io "missing" not found',
            None,
            id="missing StorageClass",
        ),
    ],
)
def test_pre_filter_errors(objects: list[dict[str, Any]], reason: str, note: str | None) -> None:
    snap = snapshot([node("n1")], [], objects)
    state, pre, _ = run(make(VolumeZone, snap), pod("new", volumes=[pvc_vol("c")]))
    assert pre.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert pre.reasons == (reason,)
    if note:
        assert note in notes_of(state)


def test_unbound_wait_for_first_consumer_claim_skips() -> None:
    snap = snapshot([node("n1")], [], [pvc("c"), storage_class()])
    _, pre, _ = run(make(VolumeZone, snap), pod("new", volumes=[pvc_vol("c")]))
    assert pre.code == Code.SKIP
