"""VolumeRestrictions: disk conflicts, ReadWriteOncePod claims in use, missing claims."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, notes_of
from kdiagnose.scheduler.plugins.volumerestrictions.volume_restrictions import VolumeRestrictions
from kdiagnose.versions import Dialect
from tests.plugins.volume_factories import V133, V134, make, node, pod, pvc, pvc_vol, run, snapshot, verdicts

DISK = "node(s) had no available disk"
RWOP_NEW = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
RWOP_OLD = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"


def iscsi(iqn: str = "iqn.a", ro: bool = False) -> dict[str, Any]:
    return {"name": "d", "iscsi": {"iqn": iqn, "targetPortal": "10.0.0.1:3260", "lun": 0, "readOnly": ro}}


def gce(pd: str = "disk-1", ro: bool = False) -> dict[str, Any]:
    return {"name": "d", "gcePersistentDisk": {"pdName": pd, "readOnly": ro}}


def ebs(vol: str = "vol-1", ro: bool = False) -> dict[str, Any]:
    return {"name": "d", "awsElasticBlockStore": {"volumeID": vol, "readOnly": ro}}


def rbd(mons: list[str], image: str = "img", pool: str | None = None, ro: bool = False) -> dict[str, Any]:
    src: dict[str, Any] = {"monitors": mons, "image": image, "readOnly": ro}
    if pool is not None:
        src["pool"] = pool
    return {"name": "d", "rbd": src}


@pytest.mark.parametrize(
    ("mine", "theirs", "conflict"),
    [
        pytest.param(iscsi(), iscsi(), True, id="same iSCSI IQN read-write conflicts"),
        pytest.param(
            iscsi(ro=True), iscsi(ro=True), False, id="same iSCSI IQN both read-only does not conflict"
        ),
        pytest.param(iscsi(ro=True), iscsi(), True, id="same iSCSI IQN one read-write conflicts"),
        pytest.param(iscsi("iqn.a"), iscsi("iqn.b"), False, id="different iSCSI IQNs do not conflict"),
        pytest.param(gce(), gce(), True, id="same GCE PD read-write conflicts"),
        pytest.param(gce(ro=True), gce(ro=True), False, id="same GCE PD both read-only does not conflict"),
        pytest.param(
            ebs(ro=True), ebs(ro=True), True, id="same EBS volume conflicts even when both read-only"
        ),
        pytest.param(ebs("vol-1"), ebs("vol-2"), False, id="different EBS volumes do not conflict"),
        pytest.param(rbd(["m1", "m2"]), rbd(["m2"]), True, id="RBD image on overlapping monitors conflicts"),
        pytest.param(rbd(["m1"]), rbd(["m2"]), False, id="RBD image on disjoint monitors does not conflict"),
        pytest.param(rbd(["m1"], pool="rbd"), rbd(["m1"]), True, id="RBD pool defaults to rbd"),
        pytest.param(
            rbd(["m1"], pool="other"), rbd(["m1"]), False, id="RBD images in different pools do not conflict"
        ),
        pytest.param(iscsi(), gce(), False, id="different volume types never conflict"),
    ],
)
def test_disk_conflicts(mine: dict[str, Any], theirs: dict[str, Any], conflict: bool) -> None:
    snap = snapshot([node("n1"), node("n2")], [pod("old", volumes=[theirs], node="n1")])
    _, pre, per_node = run(make(VolumeRestrictions, snap), pod("new", volumes=[mine]))
    assert pre.ok
    assert verdicts(per_node) == {"n1": DISK if conflict else "ok", "n2": "ok"}
    if conflict:
        assert per_node["n1"].code == Code.UNSCHEDULABLE


@pytest.mark.parametrize(
    ("volumes", "objects", "code"),
    [
        pytest.param(
            [{"name": "cfg", "configMap": {"name": "x"}}], [], Code.SKIP, id="no relevant volumes skips"
        ),
        pytest.param([pvc_vol("c")], [pvc("c")], Code.SKIP, id="a ReadWriteOnce claim nobody uses skips"),
        pytest.param(
            [pvc_vol("c")],
            [pvc("c", modes=["ReadWriteOncePod"])],
            Code.SKIP,
            id="an unused ReadWriteOncePod claim skips",
        ),
        pytest.param([iscsi()], [], Code.SUCCESS, id="an iSCSI volume runs the filter"),
    ],
)
def test_pre_filter_skip(volumes: list[dict[str, Any]], objects: list[dict[str, Any]], code: Code) -> None:
    snap = snapshot([node("n1")], [], objects)
    _, pre, _ = run(make(VolumeRestrictions, snap), pod("new", volumes=volumes))
    assert pre.code == code


@pytest.mark.parametrize(
    ("dialect", "reason"),
    [
        pytest.param(V134, RWOP_NEW, id="v1.34 wording"),
        pytest.param(V133, RWOP_OLD, id="v1.33 wording"),
    ],
)
def test_rwop_claim_in_use_rejects_every_node(dialect: Dialect, reason: str) -> None:
    claim = pvc("shared", modes=["ReadWriteOncePod"])
    user = pod("user", volumes=[pvc_vol("shared")], node="n1")
    snap = snapshot([node("n1"), node("n2")], [user], [claim], dialect=dialect)
    _, pre, per_node = run(make(VolumeRestrictions, snap), pod("new", volumes=[pvc_vol("shared")]))
    assert pre.ok
    assert verdicts(per_node) == {"n1": reason, "n2": reason}
    assert per_node["n2"].code == Code.UNSCHEDULABLE


def test_rwop_in_use_in_another_namespace_does_not_count() -> None:
    claim = pvc("shared", modes=["ReadWriteOncePod"])
    other = pod("user", volumes=[pvc_vol("shared")], node="n1", ns="other")
    snap = snapshot([node("n1")], [other], [claim])
    _, pre, _ = run(make(VolumeRestrictions, snap), pod("new", volumes=[pvc_vol("shared")]))
    assert pre.code == Code.SKIP


def test_missing_claim_is_unresolvable_with_note() -> None:
    snap = snapshot([node("n1")], [], [])
    state, pre, _ = run(make(VolumeRestrictions, snap), pod("new", volumes=[pvc_vol("gone")]))
    assert pre.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert pre.reasons == ('persistentvolumeclaim "gone" not found',)
    assert notes_of(state) == ["not checked: the input has no PersistentVolumeClaims"]


def test_remove_pod_lifts_rwop_conflict_and_add_pod_restores_it() -> None:
    claim = pvc("shared", modes=["ReadWriteOncePod"])
    user = pod("user", volumes=[pvc_vol("shared")], node="n1")
    snap = snapshot([node("n1")], [user], [claim])
    pl = make(VolumeRestrictions, snap)
    incoming = pod("new", volumes=[pvc_vol("shared")])
    state, pre, _ = run(pl, incoming)
    assert pre.ok
    ni = snap.node_infos[0].clone()
    pruned = state.clone()
    assert pl.remove_pod(pruned, incoming, user, ni).ok
    assert pl.filter(pruned, incoming, ni).ok
    # The original state is untouched by the clone's update.
    assert pl.filter(state, incoming, ni).reasons == (RWOP_NEW,)
    assert pl.add_pod(pruned, incoming, user, ni).ok
    assert pl.filter(pruned, incoming, ni).reasons == (RWOP_NEW,)
