"""Selectors deduced from the workload objects that select a pod (plugins/helper/spread.go DefaultSelector),
plus per-snapshot indexes the spreading and inter-pod affinity plugins share.

A selector here is a tuple of parsed label requirements (ANDed; `()` selects everything), or None for
labels.Nothing() (a nil metav1.LabelSelector).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kdiagnose.model.snapshot import POD_BOUND_UPDATERS
from kdiagnose.scheduler.plugins.helper.node_selector import LabelRequirement, parse_label_selector

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo, Snapshot

__all__ = [
    "Selector",
    "candidate_pods",
    "default_selector",
    "pods_by_namespace",
    "selector_matches",
    "workload_kinds_missing",
]

Selector = tuple[LabelRequirement, ...] | None

_PODS_BY_NS_KEY = "helper/spread:pods-by-namespace"
_PODS_BY_LABEL_KEY = "helper/spread:pods-by-label"
_SERVICES_KEY = "helper/spread:service-selectors"
_WORKLOAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")


def selector_matches(selector: Selector, labels: Mapping[str, str]) -> bool:
    if selector is None:
        return False
    return all(r.matches(labels) for r in selector)


def pods_by_namespace(snapshot: Snapshot) -> dict[str, list[tuple[Pod, NodeInfo]]]:
    """Every pod bound to a node of the snapshot, with its NodeInfo, by namespace; built once per snapshot,
    so counting a namespace's pods per topology domain is one pass over that namespace, not over all nodes."""
    idx: dict[str, list[tuple[Pod, NodeInfo]]] | None = snapshot.cache.get(_PODS_BY_NS_KEY)
    if idx is None:
        idx = {}
        for ni in snapshot.node_infos:
            for p in ni.pods:
                idx.setdefault(p.namespace, []).append((p, ni))
        snapshot.cache[_PODS_BY_NS_KEY] = idx
    return idx


def _pod_bound(idx: dict[str, list[tuple[Pod, NodeInfo]]], pod: Pod, ni: NodeInfo) -> None:
    idx.setdefault(pod.namespace, []).append((pod, ni))


# Snapshot.bind (the CI gate's sequential replicas) extends the index instead of rebuilding it per pod.
POD_BOUND_UPDATERS[_PODS_BY_NS_KEY] = _pod_bound

LabelIndex = dict[str, dict[tuple[str, str], list[tuple["Pod", "NodeInfo"]]]]


def _label_index(snapshot: Snapshot, namespace: str) -> dict[tuple[str, str], list[tuple[Pod, NodeInfo]]]:
    """A namespace's bound pods by (label key, value), built the first time a selector asks about it."""
    root: LabelIndex | None = snapshot.cache.get(_PODS_BY_LABEL_KEY)
    if root is None:
        root = {}
        snapshot.cache[_PODS_BY_LABEL_KEY] = root
    idx = root.get(namespace)
    if idx is None:
        idx = {}
        for item in pods_by_namespace(snapshot).get(namespace, ()):
            for pair in item[0].labels.items():
                idx.setdefault(pair, []).append(item)
        root[namespace] = idx
    return idx


def _label_bound(root: LabelIndex, pod: Pod, ni: NodeInfo) -> None:
    idx = root.get(pod.namespace)
    if idx is not None:
        for pair in pod.labels.items():
            idx.setdefault(pair, []).append((pod, ni))


POD_BOUND_UPDATERS[_PODS_BY_LABEL_KEY] = _label_bound


def candidate_pods(snapshot: Snapshot, namespace: str, selector: Selector) -> list[tuple[Pod, NodeInfo]]:
    """The bound pods of `namespace` that `selector` could match, for counting without a scan of the whole
    namespace: through the label index on the selector's most selective `In` requirement (a pod has one
    value per key, so the values' lists are disjoint), else every pod of the namespace. A superset:
    callers still apply the selector."""
    if selector is None:
        return []
    best: list[list[tuple[Pod, NodeInfo]]] | None = None
    best_size = 0
    for r in selector:
        if r.op != "In":
            continue
        idx = _label_index(snapshot, namespace)
        lists = [lst for v in r.values if (lst := idx.get((r.key, v)))]
        size = sum(len(lst) for lst in lists)
        if best is None or size < best_size:
            best, best_size = lists, size
    if best is None:
        return pods_by_namespace(snapshot).get(namespace, [])
    if len(best) == 1:
        return best[0]
    return [item for lst in best for item in lst]


def _service_selectors(snapshot: Snapshot) -> dict[str, list[dict[str, str]]]:
    idx: dict[str, list[dict[str, str]]] | None = snapshot.cache.get(_SERVICES_KEY)
    if idx is None:
        idx = {}
        for svc in snapshot.kind("Service"):
            meta = svc.get("metadata") or {}
            sel = (svc.get("spec") or {}).get("selector")
            # A nil selector matches nothing, not everything (GetPodServices).
            if not isinstance(sel, dict):
                continue
            ns = str(meta.get("namespace") or "default")
            idx.setdefault(ns, []).append({str(k): "" if v is None else str(v) for k, v in sel.items()})
        snapshot.cache[_SERVICES_KEY] = idx
    return idx


def _set_matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def _set_requirements(label_set: Mapping[str, str]) -> list[LabelRequirement]:
    # labels.Set.AsSelector: one `key = value` requirement per entry (validated upstream at object creation).
    return [LabelRequirement(k, "In", frozenset((v,))) for k, v in label_set.items()]


def _owner_selector_requirements(obj: Mapping[str, Any] | None) -> list[LabelRequirement]:
    if obj is None:
        return []
    reqs = parse_label_selector((obj.get("spec") or {}).get("selector"))
    # A nil selector is labels.Nothing(), whose Requirements() reports not-ok: nothing is added.
    return list(reqs) if reqs is not None else []


def default_selector(pod: Pod, snapshot: Snapshot) -> tuple[LabelRequirement, ...]:
    """DefaultSelector: the merged selectors of the Services, ReplicationController, ReplicaSet or
    StatefulSet selecting the pod; `()` (empty) when none does."""
    label_set: dict[str, str] = {}
    for sel in _service_selectors(snapshot).get(pod.namespace, ()):
        if _set_matches(sel, pod.labels):
            label_set.update(sel)
    reqs = _set_requirements(label_set)
    owner = pod.controller_ref()
    if owner is None:
        return tuple(reqs)
    api_version, kind, name = (
        str(owner.get("apiVersion") or ""),
        owner.get("kind"),
        str(owner.get("name") or ""),
    )
    if api_version == "v1" and kind == "ReplicationController":
        rc = snapshot.get("ReplicationController", name, pod.namespace)
        if rc is not None:
            rc_sel = (rc.get("spec") or {}).get("selector")
            if isinstance(rc_sel, dict):
                label_set.update({str(k): "" if v is None else str(v) for k, v in rc_sel.items()})
            reqs = _set_requirements(label_set)
    elif api_version == "apps/v1" and kind in ("ReplicaSet", "StatefulSet"):
        reqs += _owner_selector_requirements(snapshot.get(str(kind), name, pod.namespace))
    return tuple(reqs)


def workload_kinds_missing(snapshot: Snapshot, pod: Pod) -> list[str]:
    """The kinds DefaultSelector would read for this pod that the input does not contain at all: Services
    (they may select any labelled pod) and the kind of the pod's controller."""
    missing = []
    if pod.labels and not snapshot.has("Service"):
        missing.append("Service")
    owner = pod.controller_ref()
    kind = str(owner.get("kind") or "") if owner else ""
    if kind in _WORKLOAD_KINDS and kind != "Service" and not snapshot.has(kind):
        missing.append(kind)
    return missing
