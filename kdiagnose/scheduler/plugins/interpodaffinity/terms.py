"""Parsed pod (anti-)affinity terms (framework/types.go AffinityTerm, newAffinityTerm, PodInfo.Update) and
the API server's matchLabelKeys/mismatchLabelKeys merge (pkg/registry/core/pod/strategy.go)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler.plugins.helper.node_selector import LabelRequirement, parse_label_selector
from kdiagnose.scheduler.plugins.helper.spread import Selector, selector_matches

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot

__all__ = ["AffinityTerm", "PodTerms", "merge_namespaces", "pod_terms", "terms_of"]

_TERMS_KEY = "interpodaffinity:terms"


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """One PodAffinityTerm: `namespaces` (the owner's namespace when neither namespaces nor namespaceSelector
    is set), the label selector and namespace selector (None = labels.Nothing), and the weight of a preferred
    term (0 for required ones)."""

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    ns_selector: Selector
    weight: int = 0
    raw: Mapping[str, Any] | None = None

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """AffinityTerm.Matches: in a listed namespace or one the namespaceSelector selects, and the labels match."""
        if pod.namespace in self.namespaces or selector_matches(self.ns_selector, ns_labels or {}):
            return selector_matches(self.selector, pod.labels)
        return False

    def describe(self) -> str:
        sel = "nothing" if self.selector is None else ", ".join(map(str, self.selector)) or "everything"
        return f"topologyKey={self.topology_key} selector=[{sel}]"


def _has(selector: Selector, key: str, op: str) -> bool:
    return selector is not None and any(r.key == key and r.op == op for r in selector)


def _apply_label_keys(selector: Selector, term: Mapping[str, Any], labels: Mapping[str, str]) -> Selector:
    """applyMatchLabelKeysAndMismatchLabelKeys (on by default since v1.31): `key in (v)` / `key notin (v)` for
    each listed key the pod has; a nil selector stays nil. The API server applies it once at creation, so a
    requirement already present for that key and operator means the object was created that way."""
    if selector is None:
        return None
    extra: list[LabelRequirement] = []
    for field, op in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
        keys = term.get(field)
        if not isinstance(keys, list):
            continue
        for k in map(str, keys):
            if k in labels and not _has(selector, k, op):
                extra.append(LabelRequirement(k, op, frozenset((labels[k],))))
    return selector + tuple(extra) if extra else selector


def _new_term(pod: Pod, term: Any, weight: int = 0) -> AffinityTerm | None:
    if not isinstance(term, dict):
        return None
    raw_sel = term.get("labelSelector")
    selector = _apply_label_keys(
        parse_label_selector(raw_sel if isinstance(raw_sel, dict) else None), term, pod.labels
    )
    raw_ns = term.get("namespaces")
    ns_list = [str(n) for n in raw_ns] if isinstance(raw_ns, list) else []
    raw_nss = term.get("namespaceSelector")
    ns_selector = parse_label_selector(raw_nss if isinstance(raw_nss, dict) else None)
    # getNamespacesFromPodAffinityTerm: neither set means the pod's own namespace.
    namespaces = frozenset(ns_list) if ns_list or isinstance(raw_nss, dict) else frozenset((pod.namespace,))
    return AffinityTerm(namespaces, selector, str(term.get("topologyKey") or ""), ns_selector, weight, term)


@dataclass(frozen=True, slots=True)
class PodTerms:
    """The four term lists of a PodInfo."""

    required_affinity: tuple[AffinityTerm, ...]
    required_anti_affinity: tuple[AffinityTerm, ...]
    preferred_affinity: tuple[AffinityTerm, ...]
    preferred_anti_affinity: tuple[AffinityTerm, ...]


def _required(pod: Pod, section: Any) -> tuple[AffinityTerm, ...]:
    terms = (
        section.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(section, dict) else None
    )
    if not isinstance(terms, list):
        return ()
    return tuple(t for t in (_new_term(pod, x) for x in terms) if t is not None)


def _preferred(pod: Pod, section: Any) -> tuple[AffinityTerm, ...]:
    terms = (
        section.get("preferredDuringSchedulingIgnoredDuringExecution") if isinstance(section, dict) else None
    )
    if not isinstance(terms, list):
        return ()
    out: list[AffinityTerm] = []
    for wt in terms:
        if not isinstance(wt, dict):
            continue
        w = wt.get("weight")
        t = _new_term(
            pod, wt.get("podAffinityTerm"), int(w) if isinstance(w, int) and not isinstance(w, bool) else 0
        )
        if t is not None:
            out.append(t)
    return tuple(out)


def pod_terms(pod: Pod) -> PodTerms:
    aff = pod.affinity.get("podAffinity")
    anti = pod.affinity.get("podAntiAffinity")
    return PodTerms(_required(pod, aff), _required(pod, anti), _preferred(pod, aff), _preferred(pod, anti))


def terms_of(snapshot: Snapshot, pod: Pod) -> PodTerms:
    """pod_terms for an existing pod, parsed once per snapshot."""
    cache: dict[int, tuple[Pod, PodTerms]] | None = snapshot.cache.get(_TERMS_KEY)
    if cache is None:
        cache = {}
        snapshot.cache[_TERMS_KEY] = cache
    hit = cache.get(id(pod))
    if hit is not None and hit[0] is pod:
        return hit[1]
    t = pod_terms(pod)
    cache[id(pod)] = (pod, t)
    return t


def _namespace_names(snapshot: Snapshot) -> list[str]:
    if snapshot.has("Namespace"):
        return [str((o.get("metadata") or {}).get("name") or "") for o in snapshot.kind("Namespace")]
    # Without Namespace objects, the namespaces the pods live in (with the label the API server always sets).
    return sorted({p.namespace for p in snapshot.pods})


def merge_namespaces(snapshot: Snapshot, term: AffinityTerm) -> AffinityTerm:
    """mergeAffinityTermNamespacesIfNotEmpty: a non-empty namespaceSelector is resolved against the listed
    Namespaces into names, then replaced by Nothing; an empty one (all namespaces) is kept."""
    if term.ns_selector == ():
        return term
    names = set(term.namespaces)
    if term.ns_selector is not None:
        for ns in _namespace_names(snapshot):
            if selector_matches(term.ns_selector, snapshot.namespace_labels(ns)):
                names.add(ns)
    return AffinityTerm(frozenset(names), term.selector, term.topology_key, None, term.weight, term.raw)
