"""PVC/PV/StorageClass helpers shared by the volume plugins, over raw API dicts.

Mirrors k8s.io/component-helpers/storage/volume/{helpers.go,pv_helpers.go} (claim/volume classes,
IsVolumeBoundToClaim, CheckNodeAffinity, FindMatchingVolume's checks), storage/ephemeral/ephemeral.go
(generic ephemeral claim names and ownership) and v1helper.MatchTopologySelectorTerms.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kdiagnose.model.quantity import QuantityError, parse_quantity
from kdiagnose.scheduler.plugins.helper.node_selector import (
    NodeSelectorTerm,
    parse_label_selector,
    parse_node_selector_terms,
)

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_SELECTED_NODE",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "NOT_SUPPORTED_PROVISIONER",
    "Obj",
    "binding_mode",
    "check_access_modes",
    "claim_name",
    "get_pvc",
    "is_fully_bound",
    "is_volume_bound_to_claim",
    "match_topology_selector_terms",
    "meta",
    "not_found",
    "pod_claims",
    "pv_class",
    "pv_node_affinity_terms",
    "pv_terms_match",
    "pvc_class",
    "pvs_by_class",
    "quantity",
    "spec",
    "volume_is_for_pod",
    "volume_mode_mismatch",
]

Obj = dict[str, Any]

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    return _dict(obj.get("metadata"))


def spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    return _dict(obj.get("spec"))


def not_found(resource: str, name: str) -> str:
    """apierrors.NewNotFound(...).Error() for a lister miss, e.g. `persistentvolumeclaim "x" not found`."""
    return f'{resource} "{name}" not found'


def quantity(raw: Any) -> Fraction:
    """An exact quantity; absent or malformed (the API server would have rejected it) reads as 0."""
    if raw is None:
        return Fraction(0)
    try:
        return parse_quantity(raw)
    except QuantityError:
        return Fraction(0)


def claim_name(pod: Pod, volume: Mapping[str, Any]) -> tuple[str, bool] | None:
    """(claim name, is generic ephemeral) for a PVC or ephemeral volume; None for other volume types.
    ephemeral.VolumeClaimName: `<pod>-<volume>`."""
    pvc = volume.get("persistentVolumeClaim")
    if isinstance(pvc, dict):
        return str(pvc.get("claimName") or ""), False
    if isinstance(volume.get("ephemeral"), dict):
        return f"{pod.name}-{volume.get('name') or ''}", True
    return None


def pod_claims(pod: Pod) -> Iterator[tuple[Mapping[str, Any], str, bool]]:
    """(volume, claim name, is ephemeral) for each of the pod's PVC-backed volumes, in volume order."""
    for v in pod.volumes:
        c = claim_name(pod, v)
        if c is not None:
            yield v, c[0], c[1]


def volume_is_for_pod(pod: Pod, pvc: Mapping[str, Any]) -> str:
    """ephemeral.VolumeIsForPod: "" when the pod controls the claim, else the upstream error text."""
    m = meta(pvc)
    ns, name = str(m.get("namespace") or "default"), str(m.get("name") or "")
    controller = next(
        (r for r in m.get("ownerReferences") or [] if isinstance(r, dict) and r.get("controller")), None
    )
    # metav1.IsControlledBy compares only the controller reference's UID with the pod's.
    if ns != pod.namespace or controller is None or str(controller.get("uid") or "") != pod.uid:
        return f"PVC {ns}/{name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"
    return ""


def pvc_class(pvc: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation wins over spec.storageClassName."""
    ann = meta(pvc).get("annotations") or {}
    if isinstance(ann, dict) and BETA_STORAGE_CLASS_ANNOTATION in ann:
        return str(ann[BETA_STORAGE_CLASS_ANNOTATION] or "")
    return str(spec(pvc).get("storageClassName") or "")


def pv_class(pv: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClass."""
    ann = meta(pv).get("annotations") or {}
    if isinstance(ann, dict) and BETA_STORAGE_CLASS_ANNOTATION in ann:
        return str(ann[BETA_STORAGE_CLASS_ANNOTATION] or "")
    return str(spec(pv).get("storageClassName") or "")


def binding_mode(sc: Mapping[str, Any]) -> str:
    """The class's volumeBindingMode. The API server defaults it to Immediate
    (pkg/apis/storage/v1/defaults.go), so a manifest without it means Immediate, never upstream's
    unreachable `VolumeBindingMode not set` error."""
    mode = sc.get("volumeBindingMode")
    return str(mode) if isinstance(mode, str) and mode else "Immediate"


def is_fully_bound(pvc: Mapping[str, Any]) -> bool:
    """volumeBinder.isPVCFullyBound: a volumeName and the bind-completed annotation."""
    ann = meta(pvc).get("annotations") or {}
    return bool(spec(pvc).get("volumeName")) and isinstance(ann, dict) and ANN_BIND_COMPLETED in ann


def is_volume_bound_to_claim(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    ref = spec(pv).get("claimRef")
    if not isinstance(ref, dict):
        return False
    m = meta(pvc)
    if str(ref.get("name") or "") != str(m.get("name") or ""):
        return False
    if str(ref.get("namespace") or "") != str(m.get("namespace") or "default"):
        return False
    uid = str(ref.get("uid") or "")
    return not uid or uid == str(m.get("uid") or "")


def volume_mode_mismatch(pvc: Mapping[str, Any], pv: Mapping[str, Any]) -> bool:
    return (spec(pvc).get("volumeMode") or "Filesystem") != (spec(pv).get("volumeMode") or "Filesystem")


def check_access_modes(pvc: Mapping[str, Any], pv: Mapping[str, Any]) -> bool:
    """CheckAccessModes: every mode the claim asks for is offered by the volume."""
    offered = set(spec(pv).get("accessModes") or [])
    return all(m in offered for m in spec(pvc).get("accessModes") or [])


def pv_node_affinity_terms(pv: Mapping[str, Any]) -> list[NodeSelectorTerm] | None:
    """Parsed spec.nodeAffinity.required terms; None when the PV has no required node affinity."""
    na = spec(pv).get("nodeAffinity")
    if not isinstance(na, dict):
        return None
    req = na.get("required")
    if not isinstance(req, dict):
        return None
    return parse_node_selector_terms(req.get("nodeSelectorTerms"))


def pv_terms_match(terms: list[NodeSelectorTerm] | None, labels: Mapping[str, str]) -> bool:
    """CheckNodeAffinity: matched against a Node carrying only labels, so matchFields are ignored
    (nodeaffinity.go skips field selectors when the node has no fields); unparsable terms never match."""
    if terms is None:
        return True
    for t in terms:
        if t.parse_error:
            continue
        if t.labels is not None and not all(r.matches(labels) for r in t.labels):
            continue
        return True
    return False


def match_topology_selector_terms(terms: Any, labels: Mapping[str, str]) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match everything; an empty term matches nothing;
    each matchLabelExpressions entry is `key In values`."""
    if not isinstance(terms, list) or not terms:
        return True
    for term in terms:
        exprs = _dict(term).get("matchLabelExpressions")
        if not isinstance(exprs, list) or not exprs:
            continue
        sel = {
            "matchExpressions": [
                {"key": _dict(e).get("key"), "operator": "In", "values": _dict(e).get("values") or []}
                for e in exprs
            ]
        }
        reqs = parse_label_selector(sel)
        if reqs is not None and all(r.matches(labels) for r in reqs):
            return True
    return False


def pvs_by_class(snapshot: Snapshot) -> dict[str, list[Obj]]:
    """PersistentVolumes by GetPersistentVolumeClass (the PV assume cache's class index), built once."""
    key = "storage:pvs-by-class"
    idx: dict[str, list[Obj]] | None = snapshot.cache.get(key)
    if idx is None:
        idx = {}
        for pv in snapshot.kind("PersistentVolume"):
            idx.setdefault(pv_class(pv), []).append(pv)
        snapshot.cache[key] = idx
    return idx


def get_pvc(snapshot: Snapshot, namespace: str, name: str) -> Obj | None:
    """The PVC lister's Get; a manifest without metadata.namespace lives in `default`."""
    pvc = snapshot.get("PersistentVolumeClaim", name, namespace)
    if pvc is None and namespace == "default":
        pvc = snapshot.get("PersistentVolumeClaim", name)
    return pvc
