"""NodeVolumeLimits: per-CSI-driver attach limits from CSINode (plugins/nodevolumelimits/csi.go, utils.go).

A volume counts once per node by `<driver>/<volumeHandle>`: bound PVs by their CSI source (or, for
in-tree PVs and inline volumes, their translation when the CSINode lists the plugin as migrated),
unbound claims by a per-claim handle under the class's provisioner. From v1.33 VolumeAttachments on the
node count too; before, Node allocatable `attachable-volumes-csi-<driver>` also sets limits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SKIP, SUCCESS, CycleState, Plugin, PreFilterResult, Status, add_note
from kdiagnose.scheduler.plugins.helper import csi_translation as trans
from kdiagnose.scheduler.plugins.helper.storage import (
    Obj,
    claim_name,
    get_pvc,
    meta,
    not_found,
    pvc_class,
    spec,
    volume_is_for_pod,
)

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo

__all__ = [
    "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED",
    "CSILimits",
    "csi_attach_limit_key",
    "driver_not_installed_reason",
]

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"


def driver_not_installed_reason(driver: str) -> str:
    """v1.37 (VolumeLimitScaling beta/on): a volume's CSI driver that opted in is missing on the node."""
    return f"{driver} CSI driver is not installed on the node"


# Upstream uses a random 32-character prefix per scheduler; any constant keeps unbound claims distinct.
_UNBOUND_HANDLE_PREFIX = "kdiagnose-unbound"
_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
_VA_KEY = "nodevolumelimits:volume-attachments"
_ATTACHED_KEY = "nodevolumelimits:attached"


class _LookupError(Exception):
    """A new pod's claim could not be resolved; `unresolvable` mirrors apierrors.IsNotFound."""

    def __init__(self, message: str, unresolvable: bool) -> None:
        super().__init__(message)
        self.unresolvable = unresolvable


# utils.go isCSIMigrationOn: these plugins count as migrated on any node with a CSINode object; only
# Portworx (whose gate is on in every supported release) also needs the migrated-plugins annotation.
# VolumeBinding differs: it always requires the annotation (binder.go isPluginMigratedToCSIOnNode).
_ALWAYS_MIGRATED = frozenset({trans.AWS_EBS, trans.GCE_PD, trans.AZURE_DISK, trans.CINDER})


def _migration_on(plugin: str, csinode: Obj | None) -> bool:
    if csinode is None:
        return False
    if plugin in _ALWAYS_MIGRATED:
        return True
    return trans.migration_on(plugin, csinode)


def csi_attach_limit_key(driver: str) -> str:
    """volumeutil.GetCSIAttachLimitKey: long driver names are shortened with a SHA-1 suffix (v1.32-)."""
    if len(_ATTACH_LIMIT_PREFIX) + len(driver) >= 63:
        return _ATTACH_LIMIT_PREFIX + driver[:23] + hashlib.sha1(driver.encode()).hexdigest()[:16]
    return _ATTACH_LIMIT_PREFIX + driver


class CSILimits(Plugin):
    name = names.NODE_VOLUME_LIMITS

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        for v in pod.volumes:
            if isinstance(v.get("persistentVolumeClaim"), dict) or isinstance(v.get("ephemeral"), dict):
                break
            if trans.inline_plugin(v) is not None:
                break
        else:
            return None, SKIP
        if not self.snapshot.has("CSINode"):
            add_note(state, "not checked: the input has no CSINodes (per-driver volume attach limits)")
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.volumes:
            return SUCCESS
        csinode = self.snapshot.get("CSINode", node_info.name)
        new_volumes: dict[str, str] = {}
        try:
            self._attachable(pod, csinode, True, new_volumes)
        except _LookupError as e:
            return Status.unresolvable(str(e)) if e.unresolvable else Status.error(str(e))
        except trans.TranslationError as e:
            return Status.error(str(e))
        if not new_volumes:
            return SUCCESS
        if self.dialect.csi_driver_must_be_installed:
            missing = self._driver_not_installed(state, new_volumes, csinode)
            if missing:
                return Status.unschedulable(
                    driver_not_installed_reason(missing), details=({"driver": missing, "installed": False},)
                )
        limits = self._limits(node_info, csinode)
        if not limits:
            return SUCCESS
        attached = self._attached(node_info, csinode)
        if isinstance(attached, str):
            return Status.error(attached)
        attached_count: dict[str, int] = {}
        for unique, key in attached.items():
            new_volumes.pop(unique, None)
            attached_count[key] = attached_count.get(key, 0) + 1
        if self.dialect.csi_limits_v133:
            for unique, key in self._volume_attachments(node_info.name).items():
                if unique not in attached:
                    attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for key in new_volumes.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in sorted(new_count.items()):
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return Status.unschedulable(
                    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
                    details=(
                        {"driver": key, "attached": attached_count.get(key, 0), "new": count, "limit": limit},
                    ),
                )
        return SUCCESS

    # ------------------------------------------------------------------ helpers

    def _driver_not_installed(
        self, state: CycleState, new_volumes: dict[str, str], csinode: Obj | None
    ) -> str:
        """checkCSIDriverOnNode (VolumeLimitScaling, v1.37): the first driver of the pod's new volumes whose
        CSIDriver sets preventPodSchedulingIfMissing and that the node's CSINode does not list. Upstream
        walks a Go map (random order); drivers are checked in name order here."""
        if not self.snapshot.has("CSIDriver"):
            add_note(
                state,
                "not checked: the input has no CSIDrivers (preventPodSchedulingIfMissing: a CSI driver "
                "missing on a node)",
            )
            return ""
        on_node = {
            str(d.get("name") or "")
            for d in (spec(csinode).get("drivers") or [] if csinode is not None else [])
            if isinstance(d, dict)
        }
        for driver in sorted(set(new_volumes.values())):
            obj = self.snapshot.get("CSIDriver", driver)
            if obj is None or spec(obj).get("preventPodSchedulingIfMissing") is not True:
                continue  # not found or not opted in: assumed installed, as upstream
            if driver not in on_node:
                return driver
        return ""

    def _attached(self, node_info: NodeInfo, csinode: Obj | None) -> dict[str, str] | str:
        """The volumes the node's pods use (or the error), shared across pods for the snapshot's own
        NodeInfos; clones (preemption, nominated pods) are recomputed."""
        shared = self.snapshot.node_info_by_name.get(node_info.name) is node_info
        cache: dict[str, dict[str, str] | str] = self.snapshot.cache.setdefault(_ATTACHED_KEY, {})
        if shared and node_info.name in cache:
            return cache[node_info.name]
        volumes: dict[str, str] = {}
        attached: dict[str, str] | str = volumes
        try:
            for existing in node_info.pods:
                self._attachable(existing, csinode, False, volumes)
        except (_LookupError, trans.TranslationError) as e:
            attached = str(e)
        if shared:
            cache[node_info.name] = attached
        return attached

    def _key(self, driver: str) -> str:
        # v1.32 and older key volumes by the Node allocatable resource name of the driver.
        return driver if self.dialect.csi_limits_v133 else csi_attach_limit_key(driver)

    def _limits(self, node_info: NodeInfo, csinode: Obj | None) -> dict[str, int]:
        """getVolumeLimits: CSINode spec.drivers[].allocatable.count (plus Node allocatable before v1.33)."""
        limits: dict[str, int] = {}
        if not self.dialect.csi_limits_v133:
            for name, v in node_info.node.allocatable.items():
                if name.startswith("attachable-volumes-"):
                    limits[name] = v
        if csinode is not None:
            for d in spec(csinode).get("drivers") or []:
                if not isinstance(d, dict):
                    continue
                count = (
                    (d.get("allocatable") or {}).get("count")
                    if isinstance(d.get("allocatable"), dict)
                    else None
                )
                if isinstance(count, int) and not isinstance(count, bool):
                    limits[self._key(str(d.get("name") or ""))] = count
        return limits

    def _attachable(self, pod: Pod, csinode: Obj | None, new_pod: bool, result: dict[str, str]) -> None:
        """filterAttachableVolumes: unique volume name -> limit key for each countable volume of the pod."""
        for v in pod.volumes:
            claim = claim_name(pod, v)
            if claim is None:
                self._inline(v, csinode, result)
                continue
            name, ephemeral = claim
            if not name:
                raise _LookupError("PersistentVolumeClaim had no name", False)
            pvc = get_pvc(self.snapshot, pod.namespace, name)
            if pvc is None:
                if new_pod:
                    msg = f"looking up PVC {pod.namespace}/{name}: {not_found('persistentvolumeclaim', name)}"
                    raise _LookupError(msg, True)
                continue
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err:
                    raise _LookupError(err, False)
            driver, handle = self._driver_info(csinode, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = self._key(driver)

    def _inline(self, volume: Mapping[str, Any], csinode: Obj | None, result: dict[str, str]) -> None:
        """checkAttachableInlineVolume: migrated in-tree inline volumes count under their CSI driver."""
        plugin = trans.inline_plugin(volume)
        if plugin is None or not _migration_on(plugin, csinode):
            return
        driver = trans.CSI_DRIVER[plugin]
        result[f"{driver}/{trans.inline_volume_handle(plugin, volume)}"] = self._key(driver)

    def _driver_info(self, csinode: Obj | None, pvc: Obj) -> tuple[str, str]:
        """getCSIDriverInfo: from the bound PV, else (no or missing PV) from the claim's StorageClass."""
        pv_name = str(spec(pvc).get("volumeName") or "")
        pv = self.snapshot.get("PersistentVolume", pv_name) if pv_name else None
        if pv is None:
            return self._driver_info_from_sc(csinode, pvc)
        csi = spec(pv).get("csi")
        if isinstance(csi, dict):
            return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")
        plugin = trans.pv_plugin(pv)
        if plugin is None or not _migration_on(plugin, csinode):
            return "", ""
        try:
            return trans.CSI_DRIVER[plugin], trans.pv_volume_handle(plugin, pv)
        except trans.TranslationError:
            return "", ""  # upstream logs and does not count the volume

    def _driver_info_from_sc(self, csinode: Obj | None, pvc: Obj) -> tuple[str, str]:
        sc_name = pvc_class(pvc)
        if not sc_name:
            return "", ""
        sc = self.snapshot.get("StorageClass", sc_name)
        if sc is None:
            return "", ""
        m = meta(pvc)
        handle = f"{_UNBOUND_HANDLE_PREFIX}-{m.get('namespace') or 'default'}/{m.get('name') or ''}"
        provisioner = str(sc.get("provisioner") or "")
        if trans.is_migratable_provisioner(provisioner):
            if not _migration_on(provisioner, csinode):
                return "", ""
            return trans.CSI_DRIVER[provisioner], handle
        return provisioner, handle

    def _volume_attachments(self, node_name: str) -> dict[str, str]:
        """getNodeVolumeAttachmentInfo: CSI volumes the node still has attached, by unique name."""
        idx: dict[str, dict[str, str]] | None = self.snapshot.cache.get(_VA_KEY)
        if idx is None:
            idx = {}
            for va in self.snapshot.kind("VolumeAttachment"):
                s = spec(va)
                attacher = str(s.get("attacher") or "")
                pv_name = (
                    (s.get("source") or {}).get("persistentVolumeName")
                    if isinstance(s.get("source"), dict)
                    else None
                )
                if not attacher or not pv_name:
                    continue
                pv = self.snapshot.get("PersistentVolume", str(pv_name))
                csi = spec(pv).get("csi") if pv is not None else None
                if not isinstance(csi, dict):
                    continue
                idx.setdefault(str(s.get("nodeName") or ""), {})[
                    f"{attacher}/{csi.get('volumeHandle') or ''}"
                ] = attacher
            self.snapshot.cache[_VA_KEY] = idx
        return idx.get(node_name, {})
