"""VolumeRestrictions: in-tree disk conflicts and ReadWriteOncePod claims in use
(plugins/volumerestrictions/volume_restrictions.go)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SKIP, SUCCESS, CycleState, Plugin, PreFilterResult, Status, add_note
from kdiagnose.scheduler.plugins.helper.storage import get_pvc, not_found, spec

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo, Snapshot

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_RWOP_CONFLICT",
    "ERR_REASON_RWOP_CONFLICT_OLD",
    "VolumeRestrictions",
    "is_volume_conflict",
]

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
# >= v1.34
ERR_REASON_RWOP_CONFLICT = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
# <= v1.33
ERR_REASON_RWOP_CONFLICT_OLD = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)

_STATE_KEY = "PreFilter" + names.VOLUME_RESTRICTIONS
_USED_PVCS_KEY = "volumerestrictions:used-pvcs"
# needsRestrictionsCheck: only these in-tree sources can conflict on a node.
_RESTRICTED = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


@dataclass(slots=True)
class _State:
    """preFilterState: the pod's RWOP claim names and how many pods in the cluster use them."""

    rwop_pvcs: frozenset[str]
    conflicting_ref_count: int

    def clone(self) -> _State:
        return _State(self.rwop_pvcs, self.conflicting_ref_count)

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        n = 0
        for v in pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if isinstance(pvc, dict) and str(pvc.get("claimName") or "") in self.rwop_pvcs:
                n += 1
        self.conflicting_ref_count += multiplier * n


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def is_volume_conflict(volume: Mapping[str, Any], pod: Pod) -> bool:
    """isVolumeConflict: the same GCE PD (unless both read-only), EBS volume, iSCSI IQN (unless both
    read-only) or RBD image on overlapping monitors (unless both read-only) is already used on the node."""
    gce, ebs, iscsi, rbd = (
        _d(volume[k]) if isinstance(volume.get(k), dict) else None
        for k in ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd")
    )
    for ev in pod.volumes:
        if gce is not None and isinstance(ev.get("gcePersistentDisk"), dict):
            e = ev["gcePersistentDisk"]
            if gce.get("pdName") == e.get("pdName") and not (gce.get("readOnly") and e.get("readOnly")):
                return True
        e_ebs = ev.get("awsElasticBlockStore")
        if ebs is not None and isinstance(e_ebs, dict) and ebs.get("volumeID") == e_ebs.get("volumeID"):
            return True
        if iscsi is not None and isinstance(ev.get("iscsi"), dict):
            e = ev["iscsi"]
            if iscsi.get("iqn") == e.get("iqn") and not (iscsi.get("readOnly") and e.get("readOnly")):
                return True
        if rbd is not None and isinstance(ev.get("rbd"), dict):
            e = ev["rbd"]
            mons = set(rbd.get("monitors") or [])
            overlap = any(m in mons for m in e.get("monitors") or [])
            if (
                overlap
                and (rbd.get("pool") or "rbd") == (e.get("pool") or "rbd")
                and rbd.get("image") == e.get("image")
                and not (rbd.get("readOnly") and e.get("readOnly"))
            ):
                return True
    return False


def _needs_check(volume: Mapping[str, Any]) -> bool:
    return any(isinstance(volume.get(k), dict) for k in _RESTRICTED)


def _used_pvcs(snapshot: Snapshot) -> set[str]:
    """The snapshot's usedPVCSet: `ns/claim` of every persistentVolumeClaim volume of pods on known nodes
    (backend/cache/snapshot.go; ephemeral volumes are not counted there)."""
    used: set[str] | None = snapshot.cache.get(_USED_PVCS_KEY)
    if used is None:
        used = set()
        for pod in snapshot.bound_pods():
            for v in pod.volumes:
                pvc = v.get("persistentVolumeClaim")
                if isinstance(pvc, dict):
                    used.add(f"{pod.namespace}/{pvc.get('claimName') or ''}")
        snapshot.cache[_USED_PVCS_KEY] = used
    return used


class VolumeRestrictions(Plugin):
    name = names.VOLUME_RESTRICTIONS

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        needs_check = any(_needs_check(v) for v in pod.volumes)
        rwop: set[str] = set()
        for v in pod.volumes:
            ref = v.get("persistentVolumeClaim")
            if not isinstance(ref, dict):
                continue
            name = str(ref.get("claimName") or "")
            pvc = get_pvc(self.snapshot, pod.namespace, name)
            if pvc is None:
                if not self.snapshot.has("PersistentVolumeClaim"):
                    add_note(state, "not checked: the input has no PersistentVolumeClaims")
                return None, Status.unresolvable(
                    not_found("persistentvolumeclaim", name), details=({"claim": name},)
                )
            if "ReadWriteOncePod" in (spec(pvc).get("accessModes") or []):
                rwop.add(name)
        used = _used_pvcs(self.snapshot) if rwop else set()
        count = sum(1 for name in rwop if f"{pod.namespace}/{name}" in used)
        if not needs_check and count == 0:
            return None, SKIP
        state.write(_STATE_KEY, _State(frozenset(rwop), count))
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        for v in pod.volumes:
            if not _needs_check(v):
                continue
            for ev in node_info.pods:
                if is_volume_conflict(v, ev):
                    return Status.unschedulable(
                        ERR_REASON_DISK_CONFLICT,
                        details=({"volume": str(v.get("name") or ""), "pod": ev.key},),
                    )
        s: _State | None = state.read(_STATE_KEY)
        if s is None:
            # volume_restrictions.go Filter: getPreFilterState fails when PreFilter did not run (a profile
            # that disables only its PreFilter).
            return Status.error(f'cannot read "{_STATE_KEY}" from cycleState')
        if s.conflicting_ref_count > 0:
            reason = (
                ERR_REASON_RWOP_CONFLICT if self.dialect.rwop_reason_new else ERR_REASON_RWOP_CONFLICT_OLD
            )
            return Status.unschedulable(reason, details=({"claims": sorted(s.rwop_pvcs)},))
        return SUCCESS

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        s: _State | None = state.read(_STATE_KEY)
        if s is None:
            return Status.error(f'cannot read "{_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_to_add, 1)
        return SUCCESS

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        s: _State | None = state.read(_STATE_KEY)
        if s is None:
            return Status.error(f'cannot read "{_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_to_remove, -1)
        return SUCCESS
