"""Port of upstream volumerestrictions/volume_restrictions_test.go: TestGCEDiskConflicts,
TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts and TestAccessModeConflicts.

TestAccessModeConflicts is taken at v1.34 semantics (volume_restrictions.go): PreFilter only fails for a
missing claim; a ReadWriteOncePod claim already in use makes Filter return Unschedulable (preemption can
help) with the v1.34 wording. Skipped: the QueueingHint tests (Go-only mechanics).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import Code, CycleState, Handle
from kdiagnose.scheduler.plugins.volumerestrictions.volume_restrictions import VolumeRestrictions
from tests.plugins.volume_factories import V133, V134, snapshot

Obj = dict[str, Any]
DISK = "node(s) had no available disk"
RWOP = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
RWOP_OLD = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"


def _pod(name: str, volumes: list[Obj], node: str = "") -> Pod:
    spec: Obj = {"containers": [{"name": "c", "image": "i"}], "volumes": volumes}
    if node:
        spec["nodeName"] = node
    return Pod({"metadata": {"name": name, "namespace": "default", "uid": name}, "spec": spec})


GCE = [{"name": "v", "gcePersistentDisk": {"pdName": "foo"}}]
GCE2 = [{"name": "v", "gcePersistentDisk": {"pdName": "bar"}}]
AWS = [{"name": "v", "awsElasticBlockStore": {"volumeID": "foo"}}]
AWS2 = [{"name": "v", "awsElasticBlockStore": {"volumeID": "bar"}}]
RBD = [{"name": "v", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}]
RBD2 = [{"name": "v", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}]
ISCSI = [
    {
        "name": "v",
        "iscsi": {
            "targetPortal": "127.0.0.1:3260",
            "iqn": "iqn.2016-12.server:storage.target01",
            "fsType": "ext4",
            "lun": 0,
        },
    }
]
ISCSI2 = [
    {
        "name": "v",
        "iscsi": {
            "targetPortal": "127.0.0.1:3260",
            "iqn": "iqn.2017-12.server:storage.target01",
            "fsType": "ext4",
            "lun": 0,
        },
    }
]


def _disk_cases(kind: str, state: list[Obj], state2: list[Obj]) -> list[Any]:
    return [
        pytest.param([], None, None, id=f"{kind}/nothing"),
        pytest.param([], state, None, id=f"{kind}/one state"),
        pytest.param(state, state, DISK, id=f"{kind}/same state"),
        pytest.param(state2, state, None, id=f"{kind}/different state"),
    ]


@pytest.mark.parametrize(
    ("mine", "existing", "want"),
    [
        *_disk_cases("TestGCEDiskConflicts", GCE, GCE2),
        *_disk_cases("TestAWSDiskConflicts", AWS, AWS2),
        *_disk_cases("TestRBDDiskConflicts", RBD, RBD2),
        *_disk_cases("TestISCSIDiskConflicts", ISCSI, ISCSI2),
    ],
)
def test_disk_conflicts(mine: list[Obj], existing: list[Obj] | None, want: str | None) -> None:
    node = Node({"metadata": {"name": "n"}, "status": {"allocatable": {}}})
    pods = [_pod("existing", existing, "n")] if existing is not None else []
    snap = snapshot([node], pods, [], V134)
    plugin = VolumeRestrictions(Handle(snap, V134, {}))
    pod = _pod("new", mine)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod)
    if not mine:
        assert pre.code == Code.SKIP  # nothing to check: upstream's Filter then trivially succeeds
        return
    assert pre.ok
    got = plugin.filter(state, pod, snap.node_infos[0])
    assert (got.code, got.message) == ((Code.UNSCHEDULABLE, want) if want else (Code.SUCCESS, ""))


def _pvc(name: str, mode: str) -> Obj:
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"accessModes": [mode]},
    }


RWOP_POD_VOLS = [{"name": "v", "persistentVolumeClaim": {"claimName": "claim-with-rwop"}}]
RWX_POD_VOLS = [{"name": "v", "persistentVolumeClaim": {"claimName": "claim-with-rwx"}}]
PVCS = [_pvc("claim-with-rwop", "ReadWriteOncePod"), _pvc("claim-with-rwx", "ReadWriteMany")]


@pytest.mark.parametrize(
    ("pod_vols", "existing", "pvcs", "dialect", "want_pre", "want_filter"),
    [
        pytest.param([], [], [], V134, (Code.SKIP, ""), None, id="nothing"),
        pytest.param(
            RWOP_POD_VOLS,
            [],
            [],
            V134,
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "claim-with-rwop" not found'),
            None,
            id="failed to get PVC",
        ),
        pytest.param(
            RWOP_POD_VOLS, [RWX_POD_VOLS], PVCS, V134, (Code.SKIP, ""), None, id="no access mode conflict"
        ),
        pytest.param(
            RWOP_POD_VOLS,
            [RWOP_POD_VOLS, RWX_POD_VOLS],
            PVCS,
            V134,
            (Code.SUCCESS, ""),
            (Code.UNSCHEDULABLE, RWOP),
            id="access mode conflict",
        ),
        pytest.param(
            RWOP_POD_VOLS,
            [RWOP_POD_VOLS, RWX_POD_VOLS],
            PVCS,
            V133,
            (Code.SUCCESS, ""),
            (Code.UNSCHEDULABLE, RWOP_OLD),
            id="access mode conflict, v1.33 wording",
        ),
    ],
)
def test_access_mode_conflicts(
    pod_vols: list[Obj],
    existing: list[list[Obj]],
    pvcs: list[Obj],
    dialect: Any,
    want_pre: tuple[Code, str],
    want_filter: tuple[Code, str] | None,
) -> None:
    node = Node({"metadata": {"name": "node-1"}, "status": {"allocatable": {}}})
    pods = [_pod(f"existing-{i}", v, "node-1") for i, v in enumerate(existing)]
    snap = snapshot([node], pods, pvcs, dialect)
    plugin = VolumeRestrictions(Handle(snap, dialect, {}))
    pod = _pod("pod-with-rwop", pod_vols)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod)
    assert (pre.code, pre.message) == want_pre
    if want_filter is not None:
        got = plugin.filter(state, pod, snap.node_infos[0])
        assert (got.code, got.message) == want_filter
