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


class _Index(dict[str, Any]):
    """A per-namespace index; `shared` names the namespaces whose entries are the parent snapshot's own
    objects (derive()), copied before the first in-place update here."""

    __slots__ = ("shared",)

    def __init__(self) -> None:
        super().__init__()
        self.shared: set[str] = set()


def _changed_nodes(snapshot: Snapshot, parent: Snapshot) -> dict[str, NodeInfo | None] | None:
    """Nodes whose NodeInfo differs from the parent's (new, replaced, cloned; None = gone), or None when
    the parent changed since the derive or most nodes differ (then a rebuild is as cheap)."""
    if snapshot.parent_generation != parent.generation:
        return None
    by_name = parent.node_info_by_name
    changed: dict[str, NodeInfo | None] = {
        ni.name: ni for ni in snapshot.node_infos if by_name.get(ni.name) is not ni
    }
    if len(snapshot.node_infos) - len(changed) < len(by_name):
        mine = snapshot.node_info_by_name
        changed.update((name, None) for name in by_name if name not in mine)
    return changed if len(changed) * 4 <= len(by_name) else None


def _derived_by_namespace(
    snapshot: Snapshot, parent: Snapshot, changed: dict[str, NodeInfo | None]
) -> tuple[_Index, set[str]]:
    """The parent's pods-by-namespace with only the changed nodes' entries redone, in the order a rebuild
    gives (snapshot node order, then each node's pod order); also the namespaces that changed."""
    base = pods_by_namespace(parent)
    affected: set[str] = set()
    for name, ni in changed.items():
        before = parent.node_info_by_name.get(name)
        for holder in (before, ni):
            if holder is not None:
                affected.update(p.namespace for p in holder.pods)
    idx = _Index()
    for ns, items in base.items():
        if ns not in affected:
            idx[ns] = items
            idx.shared.add(ns)
    if affected:
        pos = {ni.name: i for i, ni in enumerate(snapshot.node_infos)}
        fresh: dict[str, list[tuple[Pod, NodeInfo]]] = {}
        for ni in changed.values():
            if ni is not None:
                for p in ni.pods:
                    fresh.setdefault(p.namespace, []).append((p, ni))
        for ns in affected:
            items = [it for it in base.get(ns, ()) if it[1].name not in changed]
            items += fresh.get(ns, [])
            if items:
                items.sort(key=lambda it: pos[it[1].name])  # stable: pods keep their node's order
                idx[ns] = items
    return idx, affected


def pods_by_namespace(snapshot: Snapshot) -> dict[str, list[tuple[Pod, NodeInfo]]]:
    """Every pod bound to a node of the snapshot, with its NodeInfo, by namespace; built once per snapshot,
    so counting a namespace's pods per topology domain is one pass over that namespace, not over all nodes.
    A derived snapshot (remedies' what-ifs) adjusts its parent's index for the nodes it changed."""
    idx: _Index | None = snapshot.cache.get(_PODS_BY_NS_KEY)
    if idx is None:
        parent = snapshot.parent
        changed = _changed_nodes(snapshot, parent) if parent is not None else None
        if parent is not None and changed is not None:
            idx, affected = _derived_by_namespace(snapshot, parent, changed)
            labels: LabelIndex | None = parent.cache.get(_PODS_BY_LABEL_KEY)
            if labels is not None and _PODS_BY_LABEL_KEY not in snapshot.cache:
                root = _Index()
                for ns, by_pair in labels.items():
                    if ns not in affected:
                        root[ns] = by_pair
                        root.shared.add(ns)
                snapshot.cache[_PODS_BY_LABEL_KEY] = root
        else:
            idx = _Index()
            for ni in snapshot.node_infos:
                for p in ni.pods:
                    idx.setdefault(p.namespace, []).append((p, ni))
        snapshot.cache[_PODS_BY_NS_KEY] = idx
    return idx


def _pod_bound(idx: _Index, pod: Pod, ni: NodeInfo) -> None:
    ns = pod.namespace
    if ns in idx.shared:
        idx.shared.discard(ns)
        idx[ns] = list(idx[ns])
    idx.setdefault(ns, []).append((pod, ni))


# Snapshot.bind (the CI gate's sequential replicas) extends the index instead of rebuilding it per pod.
POD_BOUND_UPDATERS[_PODS_BY_NS_KEY] = _pod_bound

LabelIndex = dict[str, dict[tuple[str, str], list[tuple["Pod", "NodeInfo"]]]]


def _label_index(snapshot: Snapshot, namespace: str) -> dict[tuple[str, str], list[tuple[Pod, NodeInfo]]]:
    """A namespace's bound pods by (label key, value), built the first time a selector asks about it."""
    by_ns = pods_by_namespace(snapshot)  # first: a derived snapshot inherits its parent's label index too
    root: LabelIndex | None = snapshot.cache.get(_PODS_BY_LABEL_KEY)
    if root is None:
        root = _Index()
        snapshot.cache[_PODS_BY_LABEL_KEY] = root
    idx = root.get(namespace)
    if idx is None:
        idx = {}
        for item in by_ns.get(namespace, ()):
            for pair in item[0].labels.items():
                idx.setdefault(pair, []).append(item)
        root[namespace] = idx
    return idx


def _label_bound(root: LabelIndex, pod: Pod, ni: NodeInfo) -> None:
    if isinstance(root, _Index) and pod.namespace in root.shared:
        # The parent's dict: drop it here, rebuilt from this snapshot's pods on the next question.
        root.shared.discard(pod.namespace)
        root.pop(pod.namespace, None)
        return
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
