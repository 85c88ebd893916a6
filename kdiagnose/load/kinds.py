"""The API kinds a live read fetches (group/version, resource path, what stays unverified without them) and
the predicates that tell, from a target pod's spec alone, which of them its replay needs.

No I/O and no `kubernetes` import: kdiagnose.load.apireader and kdiagnose.load.cluster use these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

__all__ = [
    "ADMISSION_KINDS",
    "AUTOSCALER_EVENT_REASONS",
    "CA_STATUS_CONFIGMAP",
    "DRA_KINDS",
    "EVENTS_CORE",
    "EVENTS_V1",
    "KINDS",
    "PREEMPTION_KINDS",
    "SPREAD_KINDS",
    "STORAGE_KINDS",
    "KindSpec",
    "needs_default_spreading",
    "needs_dra",
    "needs_preemption",
    "needs_storage",
    "pod_spec",
    "uses_namespace_selector",
]

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class KindSpec:
    """One API resource kdiagnose reads: where it is served, and what the replay loses without it."""

    kind: str
    group_version: str
    plural: str
    namespaced: bool
    checks: str = ""  # what stays unverified when the kind cannot be read

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = "/api/v1" if self.group_version == "v1" else f"/apis/{self.group_version}"
        if namespace and self.namespaced:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        if name is not None:
            base += f"/{quote(name, safe='')}"
        return base


_STORAGE_CHECKS = "VolumeBinding, VolumeZone, NodeVolumeLimits, VolumeRestrictions"
KINDS: dict[str, KindSpec] = {
    k.kind: k
    for k in (
        KindSpec("Pod", "v1", "pods", True),
        KindSpec("Node", "v1", "nodes", False),
        KindSpec("Namespace", "v1", "namespaces", False, "InterPodAffinity namespaceSelector terms"),
        KindSpec("PersistentVolumeClaim", "v1", "persistentvolumeclaims", True, _STORAGE_CHECKS),
        KindSpec("PersistentVolume", "v1", "persistentvolumes", False, "VolumeBinding, VolumeZone"),
        KindSpec(
            "StorageClass",
            "storage.k8s.io/v1",
            "storageclasses",
            False,
            "VolumeBinding (binding mode, provisioning), VolumeZone",
        ),
        KindSpec("CSINode", "storage.k8s.io/v1", "csinodes", False, "NodeVolumeLimits (CSI attach limits)"),
        KindSpec(
            "CSIDriver",
            "storage.k8s.io/v1",
            "csidrivers",
            False,
            "NodeVolumeLimits, VolumeBinding storage capacity",
        ),
        KindSpec(
            "CSIStorageCapacity",
            "storage.k8s.io/v1",
            "csistoragecapacities",
            True,
            "VolumeBinding storage capacity",
        ),
        KindSpec(
            "VolumeAttachment",
            "storage.k8s.io/v1",
            "volumeattachments",
            False,
            "NodeVolumeLimits (volumes already attached, v1.33+)",
        ),
        KindSpec(
            "PriorityClass",
            "scheduling.k8s.io/v1",
            "priorityclasses",
            False,
            "DefaultPreemption (priorities)",
        ),
        KindSpec(
            "PodDisruptionBudget",
            "policy/v1",
            "poddisruptionbudgets",
            True,
            "DefaultPreemption (victim choice under PDBs)",
        ),
        KindSpec("Service", "v1", "services", True, "PodTopologySpread default constraints (scores)"),
        KindSpec(
            "ReplicationController",
            "v1",
            "replicationcontrollers",
            True,
            "PodTopologySpread default constraints (scores)",
        ),
        KindSpec(
            "ReplicaSet", "apps/v1", "replicasets", True, "PodTopologySpread default constraints (scores)"
        ),
        KindSpec(
            "StatefulSet", "apps/v1", "statefulsets", True, "PodTopologySpread default constraints (scores)"
        ),
        KindSpec("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", True, "DynamicResources"),
        KindSpec(
            "ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates", True, "DynamicResources"
        ),
        KindSpec("ResourceSlice", "resource.k8s.io/v1", "resourceslices", False, "DynamicResources"),
        KindSpec("DeviceClass", "resource.k8s.io/v1", "deviceclasses", False, "DynamicResources"),
        # DRADeviceTaintRules (GA, v1.37): read only when the replayed release applies them.
        KindSpec(
            "DeviceTaintRule",
            "resource.k8s.io/v1",
            "devicetaintrules",
            False,
            "DynamicResources (device taints from DeviceTaintRules)",
        ),
        # Admission of the manifests `check` places (load/admission.py): what the API server would add to their
        # pods. Read by `check --context` only: live pods were admitted already.
        KindSpec("LimitRange", "v1", "limitranges", True, "LimitRange defaults of the checked manifests"),
        KindSpec(
            "RuntimeClass",
            "node.k8s.io/v1",
            "runtimeclasses",
            False,
            "RuntimeClass overhead and node scheduling of the checked manifests",
        ),
        # The autoscalers' own state (kdiagnose.autoscaler): scale-up advice and the CI gate's scale-up policy.
        KindSpec("ConfigMap", "v1", "configmaps", True, "cluster-autoscaler status"),
        KindSpec("NodePool", "karpenter.sh/v1", "nodepools", False, "Karpenter NodePools (scale-up advice)"),
        KindSpec(
            "NodeClaim", "karpenter.sh/v1", "nodeclaims", False, "Karpenter NodeClaims (nodes launching)"
        ),
    )
}
# cluster-autoscaler's status ConfigMap (--status-config-map-name default, in CA's namespace).
CA_STATUS_CONFIGMAP = ("kube-system", "cluster-autoscaler-status")
# Events the autoscalers write on pods (cluster-autoscaler, Karpenter), read beside FailedScheduling.
AUTOSCALER_EVENT_REASONS = ("NotTriggerScaleUp", "TriggeredScaleUp", "Nominated")
# Scheduling events: events.k8s.io/v1 first, core/v1 when that API is not readable.
EVENTS_V1 = KindSpec("Event", "events.k8s.io/v1", "events", True)
EVENTS_CORE = KindSpec("Event", "v1", "events", True, "the recorded-vs-replayed comparison")

# Volume sources that involve a plugin beyond the pod itself (claims, attach limits, disk conflicts).
_STORAGE_VOLUME_SOURCES = frozenset(
    {
        "persistentVolumeClaim",
        "ephemeral",
        "csi",
        "gcePersistentDisk",
        "awsElasticBlockStore",
        "azureDisk",
        "cinder",
        "iscsi",
        "rbd",
    }
)
# The kinds each part of the replay reads; a pod/pods read lists them only when a target needs that part.
STORAGE_KINDS = (
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
)
PREEMPTION_KINDS = ("PriorityClass", "PodDisruptionBudget")
SPREAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
ADMISSION_KINDS = ("LimitRange", "RuntimeClass")
DRA_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass")


def pod_spec(pod: Obj) -> Obj:
    """The pod's spec, or {} when it is missing or malformed."""
    spec = pod.get("spec")
    return spec if isinstance(spec, dict) else {}


def needs_storage(pod: Obj) -> bool:
    """The volume plugins read claims, volumes, classes or CSI objects for this pod."""
    return any(
        isinstance(v, dict) and not _STORAGE_VOLUME_SOURCES.isdisjoint(v)
        for v in pod_spec(pod).get("volumes") or ()
    )


def needs_preemption(pod: Obj) -> bool:
    """DefaultPreemption runs at PostFilter unless the pod says preemptionPolicy: Never."""
    return pod_spec(pod).get("preemptionPolicy") != "Never"


def needs_default_spreading(pod: Obj) -> bool:
    """Without constraints of its own, PodTopologySpread scores with the defaults, which read the pod's
    owning Services/controllers."""
    return not pod_spec(pod).get("topologySpreadConstraints")


def needs_dra(pod: Obj) -> bool:
    """DynamicResources reads claims, slices and device classes only for pods with resourceClaims."""
    return bool(pod_spec(pod).get("resourceClaims"))


def uses_namespace_selector(pod: Obj) -> bool:
    """An InterPodAffinity term (required or preferred) with a namespaceSelector needs the Namespaces."""
    affinity = pod_spec(pod).get("affinity")
    if not isinstance(affinity, dict):
        return False
    for key in ("podAffinity", "podAntiAffinity"):
        a = affinity.get(key)
        if not isinstance(a, dict):
            continue
        for term in a.get("requiredDuringSchedulingIgnoredDuringExecution") or ():
            if isinstance(term, dict) and term.get("namespaceSelector") is not None:
                return True
        for w in a.get("preferredDuringSchedulingIgnoredDuringExecution") or ():
            term = w.get("podAffinityTerm") if isinstance(w, dict) else None
            if isinstance(term, dict) and term.get("namespaceSelector") is not None:
                return True
    return False
