"""In-tree volume -> CSI translation, as far as the scheduler needs it (k8s.io/csi-translation-lib).

Covers what NodeVolumeLimits and VolumeBinding read from a translated volume: the in-tree plugin name,
its CSI driver, the volume handle (for counting unique attachments) and, for bound PVs, the zone key
rewrite of the PV's node affinity (plugins/in_tree_volume.go translateTopologyFromInTreeToCSI).
`migration_on` is VolumeBinding's test: the CSINode lists the plugin in its migrated-plugins annotation
(volumebinding/binder.go isPluginMigratedToCSIOnNode). NodeVolumeLimits' isCSIMigrationOn
(nodevolumelimits/utils.go) needs the annotation only for Portworx; see nodevolumelimits/csi.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

__all__ = [
    "AWS_EBS",
    "CSI_DRIVER",
    "GCE_PD",
    "TranslationError",
    "inline_plugin",
    "inline_volume_handle",
    "is_migratable_provisioner",
    "migration_on",
    "pv_plugin",
    "pv_volume_handle",
    "translated_pv_affinity",
]

AWS_EBS = "kubernetes.io/aws-ebs"
GCE_PD = "kubernetes.io/gce-pd"
AZURE_DISK = "kubernetes.io/azure-disk"
AZURE_FILE = "kubernetes.io/azure-file"
CINDER = "kubernetes.io/cinder"
VSPHERE = "kubernetes.io/vsphere-volume"
PORTWORX = "kubernetes.io/portworx-volume"

# Volume source field -> in-tree plugin name (translate.go inTreePlugins, CanSupport/CanSupportInline).
_SOURCE_PLUGIN = {
    "awsElasticBlockStore": AWS_EBS,
    "gcePersistentDisk": GCE_PD,
    "azureDisk": AZURE_DISK,
    "azureFile": AZURE_FILE,
    "cinder": CINDER,
    "vsphereVolume": VSPHERE,
    "portworxVolume": PORTWORX,
}
CSI_DRIVER = {
    AWS_EBS: "ebs.csi.aws.com",
    GCE_PD: "pd.csi.storage.gke.io",
    AZURE_DISK: "disk.csi.azure.com",
    AZURE_FILE: "file.csi.azure.com",
    CINDER: "cinder.csi.openstack.org",
    VSPHERE: "csi.vsphere.vmware.com",
    PORTWORX: "pxd.portworx.com",
}
# Plugins whose migration the scheduler honours; Portworx's gate is on (beta) from v1.31 and GA in v1.33,
# so every supported release counts it. Azure File and vSphere are never counted.
_MIGRATION_PLUGINS = frozenset({AWS_EBS, GCE_PD, AZURE_DISK, CINDER, PORTWORX})
# Zonal topology keys the PV translation rewrites a zone requirement to (aws_ebs.go, gce_pd.go,
# openstack_cinder.go); Azure Disk and Portworx translations leave node affinity alone.
_TOPOLOGY_KEY = {
    AWS_EBS: "topology.ebs.csi.aws.com/zone",
    GCE_PD: "topology.gke.io/zone",
    CINDER: "topology.cinder.csi.openstack.org/zone",
}
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
_ZONE_GA, _ZONE_BETA = "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"
_REGION_GA, _REGION_BETA = "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"
_MULTI_ZONE_DELIMITER = "__"
_AWS_VOLUME_RE = re.compile(r"^vol-[^/]*$")
_UNSPECIFIED = "UNSPECIFIED"


class TranslationError(ValueError):
    """A volume the translation library rejects (e.g. a malformed EBS volume ID)."""


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def inline_plugin(volume: Mapping[str, Any]) -> str | None:
    """IsInlineMigratable + GetInTreePluginNameFromSpec for a pod volume."""
    for field, plugin in _SOURCE_PLUGIN.items():
        if isinstance(volume.get(field), dict):
            return plugin
    return None


def pv_plugin(pv: Mapping[str, Any]) -> str | None:
    """IsPVMigratable + GetInTreePluginNameFromSpec for a PersistentVolume."""
    spec = _dict(pv.get("spec"))
    for field, plugin in _SOURCE_PLUGIN.items():
        if isinstance(spec.get(field), dict):
            return plugin
    return None


def is_migratable_provisioner(provisioner: str) -> bool:
    """IsMigratableIntreePluginByName."""
    return provisioner in CSI_DRIVER


def migration_on(plugin: str, csinode: Mapping[str, Any] | None) -> bool:
    """isCSIMigrationOn: a plugin the scheduler migrates, listed in the CSINode's migrated-plugins."""
    if csinode is None or plugin not in _MIGRATION_PLUGINS:
        return False
    ann = _dict(_dict(csinode.get("metadata")).get("annotations"))
    mpa = str(ann.get(MIGRATED_PLUGINS_ANNOTATION) or "")
    return plugin in mpa.split(",") if mpa else False


def _ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<id>, aws:///<id> or a bare vol-... id."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlparse(kubernetes_id).path.strip("/")
    if not _AWS_VOLUME_RE.match(aws_id):
        raise TranslationError(
            f"failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume ({kubernetes_id})"
        )
    return aws_id


def _source_handle(plugin: str, src: Mapping[str, Any]) -> str:
    if plugin == AWS_EBS:
        return _ebs_volume_id(str(src.get("volumeID") or ""))
    if plugin == AZURE_DISK:
        return str(src.get("diskURI") or "")
    if plugin in (CINDER, PORTWORX):
        return str(src.get("volumeID") or "")
    if plugin == AZURE_FILE:
        return str(src.get("shareName") or "")
    if plugin == VSPHERE:
        return str(src.get("volumePath") or "")
    return str(src.get("pdName") or "")


def inline_volume_handle(plugin: str, volume: Mapping[str, Any]) -> str:
    """The CSI volume handle TranslateInTreeInlineVolumeToCSI produces."""
    field = next(f for f, p in _SOURCE_PLUGIN.items() if p == plugin)
    src = _dict(volume.get(field))
    if plugin == GCE_PD:
        return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{src.get('pdName') or ''}"
    return _source_handle(plugin, src)


def pv_volume_handle(plugin: str, pv: Mapping[str, Any]) -> str:
    """The CSI volume handle TranslateInTreePVToCSI produces."""
    field = next(f for f, p in _SOURCE_PLUGIN.items() if p == plugin)
    src = _dict(_dict(pv.get("spec")).get(field))
    if plugin == GCE_PD:
        labels = _dict(_dict(pv.get("metadata")).get("labels"))
        zones = str(labels.get(_ZONE_BETA) or labels.get(_ZONE_GA) or "").split(_MULTI_ZONE_DELIMITER)
        pd = src.get("pdName") or ""
        if len(zones) == 1 and zones[0]:
            return f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{pd}"
        if len(zones) > 1:
            regions = {z.rsplit("-", 1)[0] for z in zones}
            if len(regions) != 1:
                raise TranslationError(f"failed to get region from zones: multiple or no regions in {zones}")
            return f"projects/{_UNSPECIFIED}/regions/{regions.pop()}/disks/{pd}"
        return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd}"
    return _source_handle(plugin, src)


def _terms(pv: Mapping[str, Any]) -> list[dict[str, Any]]:
    req = _dict(_dict(_dict(pv.get("spec")).get("nodeAffinity")).get("required"))
    terms = req.get("nodeSelectorTerms")
    return [_dict(t) for t in terms] if isinstance(terms, list) else []


def _has_key(terms: list[dict[str, Any]], key: str) -> bool:
    return any(_dict(e).get("key") == key for t in terms for e in t.get("matchExpressions") or [])


def translated_pv_affinity(plugin: str, pv: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The nodeSelectorTerms of the translated PV (None: no required node affinity), following
    translateTopologyFromInTreeToCSI: zone requirements move to the driver's key; a PV without them
    gets one from its zone label; beta region requirements become the GA key."""
    terms = _terms(pv)
    key = _TOPOLOGY_KEY.get(plugin)
    if key is None:
        return terms or None
    labels = _dict(_dict(pv.get("metadata")).get("labels"))
    if _has_key(terms, _ZONE_GA):
        zone_label, region_label = _ZONE_GA, _REGION_GA
    elif _has_key(terms, _ZONE_BETA):
        zone_label, region_label = _ZONE_BETA, _REGION_BETA
    elif _ZONE_GA in labels:
        zone_label, region_label = _ZONE_GA, _REGION_GA
    elif _ZONE_BETA in labels:
        zone_label, region_label = _ZONE_BETA, _REGION_BETA
    else:
        zone_label, region_label = _ZONE_GA, _REGION_GA

    def rename(old: str, new: str, ts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for t in ts:
            exprs = [
                dict(_dict(e), key=new) if _dict(e).get("key") == old else _dict(e)
                for e in t.get("matchExpressions") or []
            ]
            out.append({**t, "matchExpressions": exprs})
        return out

    if _has_key(terms, zone_label):
        terms = rename(zone_label, key, terms)
    elif zone_label in labels:
        zones = sorted({z.strip() for z in str(labels[zone_label]).split(_MULTI_ZONE_DELIMITER) if z.strip()})
        if zones:
            req = {"key": key, "operator": "In", "values": zones}
            terms = [
                {**t, "matchExpressions": [*(t.get("matchExpressions") or []), req]} for t in terms or [{}]
            ]
    if region_label == _REGION_BETA and _has_key(terms, _REGION_BETA):
        terms = rename(_REGION_BETA, _REGION_GA, terms)
    return terms or None
