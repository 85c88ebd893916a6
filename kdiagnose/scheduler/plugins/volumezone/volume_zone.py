"""VolumeZone: a bound PV's zone/region labels must match the node's (plugins/volumezone/volume_zone.go)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SKIP, SUCCESS, CycleState, Plugin, PreFilterResult, Status, add_note
from kdiagnose.scheduler.plugins.helper.storage import binding_mode, get_pvc, meta, not_found, pvc_class, spec

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_NO_PV_NAME",
    "ERR_REASON_NO_PV_OR_CLASS",
    "ERR_REASON_PVC_NO_NAME",
    "VolumeZone",
]

ERR_REASON_CONFLICT = "node(s) had no available volume zone"
ERR_REASON_PVC_NO_NAME = "PersistentVolumeClaim had no name"
ERR_REASON_NO_PV_OR_CLASS = "PersistentVolumeClaim had no pv name and storageClass name"
ERR_REASON_NO_PV_NAME = "PersistentVolume had no name"

_STATE_KEY = "PreFilter" + names.VOLUME_ZONE
_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
_REGION_BETA = "failure-domain.beta.kubernetes.io/region"
_ZONE_GA = "topology.kubernetes.io/zone"
_REGION_GA = "topology.kubernetes.io/region"
# topologyLabels, in upstream order (the first mismatching PV label decides nothing but the log line).
_TOPOLOGY_LABELS = (_ZONE_BETA, _REGION_BETA, _ZONE_GA, _REGION_GA)
_TO_GA = {_ZONE_BETA: _ZONE_GA, _REGION_BETA: _REGION_GA}


@dataclass(frozen=True, slots=True)
class _PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def _label_zones(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: `__`-separated zones; an empty element makes the label unparsable (ignored)."""
    zones = [z.strip() for z in value.split("__")]
    if any(not z for z in zones):
        return None
    return frozenset(zones)


class VolumeZone(Plugin):
    name = names.VOLUME_ZONE

    def _pv_topologies(self, state: CycleState, pod: Pod) -> tuple[list[_PVTopology], Status]:
        out: list[_PVTopology] = []
        snap = self.snapshot
        for v in pod.volumes:
            ref = v.get("persistentVolumeClaim")
            if not isinstance(ref, dict):
                continue
            name = str(ref.get("claimName") or "")
            if not name:
                return [], Status.unresolvable(ERR_REASON_PVC_NO_NAME)
            pvc = get_pvc(snap, pod.namespace, name)
            if pvc is None:
                if not snap.has("PersistentVolumeClaim"):
                    add_note(state, "not checked: the input has no PersistentVolumeClaims")
                return [], Status.unresolvable(not_found("persistentvolumeclaim", name))
            pv_name = str(spec(pvc).get("volumeName") or "")
            if not pv_name:
                sc_name = pvc_class(pvc)
                if not sc_name:
                    return [], Status.unresolvable(ERR_REASON_NO_PV_OR_CLASS)
                sc = snap.get("StorageClass", sc_name)
                if sc is None:
                    if not snap.has("StorageClass"):
                        add_note(state, "not checked: the input has no StorageClasses")
                    return [], Status.unresolvable(not_found("storageclass.storage.k8s.io", sc_name))
                if binding_mode(sc) == "WaitForFirstConsumer":
                    continue
                return [], Status.unresolvable(ERR_REASON_NO_PV_NAME)
            pv = snap.get("PersistentVolume", pv_name)
            if pv is None:
                if not snap.has("PersistentVolume"):
                    add_note(state, "not checked: the input has no PersistentVolumes")
                return [], Status.unresolvable(
                    not_found("persistentvolume", pv_name), details=({"pv": pv_name},)
                )
            labels = meta(pv).get("labels") or {}
            for key in _TOPOLOGY_LABELS:
                if isinstance(labels, dict) and key in labels:
                    zones = _label_zones(str(labels[key] or ""))
                    if zones is not None:
                        out.append(_PVTopology(pv_name, key, zones))
        return out, SUCCESS

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        topologies, status = self._pv_topologies(state, pod)
        if not status.ok:
            return None, status
        if not topologies:
            return None, SKIP
        state.write(_STATE_KEY, topologies)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.volumes:
            return SUCCESS
        topologies: list[_PVTopology] | None = state.read(_STATE_KEY)
        if topologies is None:
            topologies, status = self._pv_topologies(state, pod)
            if not status.ok:
                return status
        labels = node_info.node.labels
        if not any(k in labels for k in _TOPOLOGY_LABELS):
            return SUCCESS
        for t in topologies:
            value = labels.get(t.key)
            if value is None:
                value = labels.get(_TO_GA.get(t.key, t.key))
            if value is None or value not in t.values:
                return Status.unresolvable(
                    ERR_REASON_CONFLICT,
                    details=(
                        {"pv": t.pv_name, "label": t.key, "pv_values": sorted(t.values), "node_value": value},
                    ),
                )
        return SUCCESS
