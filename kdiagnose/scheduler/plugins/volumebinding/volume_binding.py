"""VolumeBinding: PVC checks at PreFilter, per-node PV affinity / static binding / dynamic provisioning
at Filter (plugins/volumebinding/volume_binding.go and binder.go FindPodVolumes).

Scoring needs the alpha StorageCapacityScoring gate (VolumeCapacityPriority before v1.33), off in every
supported release, so PreScore always skips.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kdiagnose.model.quantity import QuantityError, value
from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SKIP, SUCCESS, CycleState, Plugin, PreFilterResult, Status, add_note
from kdiagnose.scheduler.plugins.helper import csi_translation as trans
from kdiagnose.scheduler.plugins.helper.node_selector import (
    LabelRequirement,
    NodeSelectorTerm,
    parse_label_selector,
    parse_node_selector_terms,
)
from kdiagnose.scheduler.plugins.helper.storage import (
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    Obj,
    binding_mode,
    check_access_modes,
    get_pvc,
    is_fully_bound,
    is_volume_bound_to_claim,
    match_topology_selector_terms,
    meta,
    not_found,
    pod_claims,
    pv_class,
    pv_node_affinity_terms,
    pv_terms_match,
    pvc_class,
    pvs_by_class,
    quantity,
    spec,
    volume_is_for_pod,
    volume_mode_mismatch,
)
from kdiagnose.scheduler.plugins.noderesources.fit import broken_linear, go_round

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NODE_CONFLICT_OLD",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_REASON_UNBOUND_IMMEDIATE",
    "VolumeBinding",
]

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
# >= v1.33
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
# <= v1.32
ERR_REASON_NODE_CONFLICT_OLD = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

_STATE_KEY = names.VOLUME_BINDING
_TERMS_KEY = "volumebinding:pv-terms"
_TRANSLATED_KEY = "volumebinding:translated-pv-terms"
_CAPACITY_KEY = "volumebinding:capacities-by-class"
_PV_INDEX_KEY = "volumebinding:pvs-by-claim-ref"


class _FilterError(Exception):
    """An error FindPodVolumes returns (the node's status is Error, not a reason)."""


@dataclass(slots=True)
class _Bound:
    pvc_name: str
    pv_name: str
    pv: Obj | None


# (PV name, PV, its parsed node affinity)
_Candidate = tuple[str, Obj, "list[NodeSelectorTerm] | None"]


@dataclass(slots=True)
class _Unbound:
    """An unbound WaitForFirstConsumer claim with what FindMatchingVolume and provisioning read."""

    pvc: Obj
    key: str  # namespace/name
    cls: str
    requested: Fraction
    selected_node: str | None
    selector: tuple[LabelRequirement, ...] | None  # None: no selector
    selector_error: bool
    vac: str
    # Filled on first use by VolumeBinding._candidates (per scheduling cycle).
    candidates: tuple[list[_Candidate], list[_Candidate]] | None = None


@dataclass(slots=True)
class _State:
    bound: list[_Bound] = field(default_factory=list)
    delay: list[_Unbound] = field(default_factory=list)  # pod volume order
    delay_by_size: list[_Unbound] = field(default_factory=list)
    # podVolumesByNode for Score (v1.37 StorageCapacityScoring): per node that passed Filter, the static
    # bindings (claim, PV) and the dynamic provisions (claim, its CSIStorageCapacity's capacity or None).
    by_node: dict[str, tuple[list[tuple[_Unbound, Obj]], list[tuple[_Unbound, int | None]]]] = field(
        default_factory=dict
    )


def _labels(m: dict[str, Any]) -> dict[str, str]:
    labels = m.get("labels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def _requests(pvc: Obj) -> dict[str, Any] | None:
    res = spec(pvc).get("resources")
    req = res.get("requests") if isinstance(res, dict) else None
    return req if isinstance(req, dict) else None


def _shape(args: dict[str, Any]) -> list[tuple[int, int]]:
    """VolumeBindingArgs.shape as defaulted when StorageCapacityScoring is on: (0, 10), (100, 0)."""
    raw = args.get("shape")
    points: list[tuple[int, int]] = []
    if isinstance(raw, list):
        for p in raw:
            if isinstance(p, dict):
                points.append((int(p.get("utilization") or 0), int(p.get("score") or 0)))
    return points or [(0, 10), (100, 0)]


def _value(raw: Any) -> int:
    try:
        return value(raw) if raw is not None else 0
    except QuantityError:
        return 0


class VolumeBinding(Plugin):
    name = names.VOLUME_BINDING

    # ------------------------------------------------------------------ PreFilter

    def _pod_has_pvcs(self, pod: Pod) -> tuple[bool, str]:
        """podHasPVCs: (has any claim, the first rejection message or "")."""
        has = False
        for _, name, ephemeral in pod_claims(pod):
            has = True
            pvc = get_pvc(self.snapshot, pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    return (
                        has,
                        f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"',
                    )
                return has, not_found("persistentvolumeclaim", name)
            if (pvc.get("status") or {}).get("phase") == "Lost":
                pv = spec(pvc).get("volumeName") or ""
                return has, f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume "{pv}"'
            if meta(pvc).get("deletionTimestamp"):
                return has, f'persistentvolumeclaim "{name}" is being deleted'
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err:
                    return has, err
        return has, ""

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        snap = self.snapshot
        has, err = self._pod_has_pvcs(pod)
        if err:
            if not snap.has("PersistentVolumeClaim"):
                add_note(state, "not checked: the input has no PersistentVolumeClaims")
            return None, Status.unresolvable(err)
        if not has:
            return None, SKIP
        st = _State()
        immediate: list[str] = []
        for _, name, _ in pod_claims(pod):
            pvc = get_pvc(snap, pod.namespace, name)
            assert pvc is not None  # checked by _pod_has_pvcs
            if is_fully_bound(pvc):
                pv_name = str(spec(pvc).get("volumeName") or "")
                st.bound.append(_Bound(name, pv_name, snap.get("PersistentVolume", pv_name)))
                continue
            cls = pvc_class(pvc)
            delay = False
            if cls:
                sc = snap.get("StorageClass", cls)
                if sc is None:
                    if not snap.has("StorageClass"):
                        add_note(state, "not checked: the input has no StorageClasses")
                else:
                    # IsDelayBindingMode; a class that does not exist means Immediate.
                    delay = binding_mode(sc) == "WaitForFirstConsumer"
            elif not snap.has("StorageClass"):
                # No class: admission's DefaultStorageClass would have named the default one, if any; without
                # the StorageClasses kdiagnose cannot tell (a manifest's claim template often names none).
                add_note(
                    state,
                    "not checked: the input has no StorageClasses (claims without storageClassName get the "
                    "default class, if there is one)",
                )
            if delay and not spec(pvc).get("volumeName"):
                st.delay.append(self._unbound(pvc, pod.namespace, name, cls))
            else:
                immediate.append(name)
        if immediate:
            return None, Status.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE, details=({"claims": immediate},))
        if any(b.pv is None for b in st.bound) and not snap.has("PersistentVolume"):
            add_note(state, "not checked: the input has no PersistentVolumes")
        if st.delay:
            if not snap.has("PersistentVolume"):
                add_note(
                    state,
                    "not checked: the input has no PersistentVolumes (static binding of unbound claims)",
                )
            if not snap.has("CSIDriver"):
                add_note(
                    state, "not checked: the input has no CSIDrivers (storage capacity of unbound claims)"
                )
            elif not snap.has("CSIStorageCapacity") and any(self._tracks_capacity(c.cls) for c in st.delay):
                # hasEnoughCapacity reads "no CSIStorageCapacity" as "no capacity on this node": a dump that
                # left the kind out makes every node fail "did not have enough free storage".
                add_note(
                    state,
                    "not checked: the input has no CSIStorageCapacities; a CSI driver with storageCapacity: "
                    "true then has no capacity on any node (kubectl get csistoragecapacities -A)",
                )
        # sort.Sort(byPVCSize): insertion sort for the few claims a pod has, i.e. stable.
        st.delay_by_size = sorted(st.delay, key=lambda c: c.requested)
        state.write(_STATE_KEY, st)
        return None, SUCCESS

    def _tracks_capacity(self, cls: str) -> bool:
        """The claim's class provisions through a CSIDriver with storageCapacity: true (hasEnoughCapacity's
        condition for reading CSIStorageCapacity objects at all)."""
        sc = self.snapshot.get("StorageClass", cls) if cls else None
        driver = self.snapshot.get("CSIDriver", str(sc.get("provisioner") or "")) if sc is not None else None
        return driver is not None and spec(driver).get("storageCapacity") is True

    def _unbound(self, pvc: Obj, namespace: str, name: str, cls: str) -> _Unbound:
        s = spec(pvc)
        requests = (
            (s.get("resources") or {}).get("requests") if isinstance(s.get("resources"), dict) else None
        )
        requested = quantity((requests or {}).get("storage")) if isinstance(requests, dict) else Fraction(0)
        ann = meta(pvc).get("annotations") or {}
        selected = ann.get(ANN_SELECTED_NODE) if isinstance(ann, dict) else None
        raw_sel = s.get("selector")
        selector = parse_label_selector(raw_sel) if isinstance(raw_sel, dict) else None
        return _Unbound(
            pvc=pvc,
            key=f"{namespace}/{name}",
            cls=cls,
            requested=requested,
            selected_node=None if selected is None else str(selected),
            selector=selector,
            selector_error=isinstance(raw_sel, dict) and selector is None,
            vac=str(s.get("volumeAttributesClassName") or ""),
        )

    # ------------------------------------------------------------------ Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        st: _State | None = state.read(_STATE_KEY)
        if st is None:
            return Status.error(f'reading "{_STATE_KEY}" from cycle state: not found')
        try:
            reasons, details = self._find_pod_volumes(st, node_info)
        except (_FilterError, trans.TranslationError) as e:
            return Status.error(str(e))
        if reasons:
            return Status.unresolvable(*reasons, details=tuple(details))
        st.by_node.setdefault(node_info.name, ([], []))
        return SUCCESS

    def _find_pod_volumes(self, st: _State, node_info: NodeInfo) -> tuple[list[str], list[dict[str, Any]]]:
        """FindPodVolumes: the conflict reasons, in upstream order."""
        node = node_info.node
        labels = node.labels
        details: list[dict[str, Any]] = []
        bound_ok = pvs_found = unbound_ok = sufficient = True
        if st.bound:
            csinode = self.snapshot.get("CSINode", node.name)
            for b in st.bound:
                if b.pv is None:
                    pvs_found = False
                    details.append({"claim": b.pvc_name, "missing_pv": b.pv_name})
                    break
                if not pv_terms_match(self._bound_terms(b.pv, csinode), labels):
                    bound_ok = False
                    details.append({"claim": b.pvc_name, "pv": b.pv_name})
                    break
        if st.delay:
            unbound_ok, sufficient = self._check_unbound(st, node_info, details)
        reasons: list[str] = []
        if not bound_ok:
            reasons.append(
                ERR_REASON_NODE_CONFLICT
                if self.dialect.pv_affinity_reason_new
                else ERR_REASON_NODE_CONFLICT_OLD
            )
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return reasons, details

    def _check_unbound(
        self, st: _State, node_info: NodeInfo, details: list[dict[str, Any]]
    ) -> tuple[bool, bool]:
        name = node_info.name
        static: list[tuple[_Unbound, Obj]] = []
        dynamic: list[tuple[_Unbound, int | None]] = []
        st.by_node[name] = (static, dynamic)
        to_provision: list[_Unbound] = []
        selected = {id(c) for c in st.delay if c.selected_node is not None}
        for c in st.delay:
            if c.selected_node is not None:
                if c.selected_node != name:
                    details.append({"claim": c.key, "selected_node": c.selected_node})
                    return False, True
                to_provision.append(c)
        ok = True
        to_match = [c for c in st.delay_by_size if id(c) not in selected]
        if to_match:
            ok, unmatched = self._find_matching_volumes(to_match, node_info, static)
            to_provision.extend(unmatched)
        if to_provision:
            return self._check_provisions(to_provision, node_info, details, dynamic)
        return ok, True

    def _find_matching_volumes(
        self, claims: list[_Unbound], node_info: NodeInfo, matched: list[tuple[_Unbound, Obj]]
    ) -> tuple[bool, list[_Unbound]]:
        """findMatchingVolumes: one PV per claim (smallest fit), never the same PV twice."""
        chosen: set[str] = set()
        unmatched: list[_Unbound] = []
        found = True
        for c in claims:
            pv = self._find_matching_volume(c, node_info, chosen)
            if pv is None:
                unmatched.append(c)
                found = False
                continue
            chosen.add(str(meta(pv).get("name") or ""))
            matched.append((c, pv))
        return found, unmatched

    def _find_matching_volume(self, c: _Unbound, node_info: NodeInfo, excluded: set[str]) -> Obj | None:
        """volume.FindMatchingVolume with a node and delayBinding. The node-independent checks run once
        per claim (`_candidates`); per node only exclusion and node affinity remain. Equivalent to the
        upstream single pass: the first PV pre-bound to the claim decides outright, otherwise the
        smallest fitting PV wins, the earliest among equals."""
        labels = node_info.node.labels
        prebound, candidates = self._candidates(c)
        for name, pv, terms in prebound:
            if name not in excluded:
                return pv if pv_terms_match(terms, labels) else None
        for name, pv, terms in candidates:
            if name not in excluded and pv_terms_match(terms, labels):
                return pv
        return None

    def _class_pvs(self, cls: str, claim_key: str) -> list[Obj]:
        """The class's PVs that are unclaimed or claim this claim, in list order: PVs reserved for other
        claims never match, and skipping them up front keeps big clusters fast."""
        idx: dict[str, tuple[list[tuple[int, Obj]], dict[str, list[tuple[int, Obj]]]]] | None = (
            self.snapshot.cache.get(_PV_INDEX_KEY)
        )
        if idx is None:
            idx = {}
            for c_name, pvs in pvs_by_class(self.snapshot).items():
                free: list[tuple[int, Obj]] = []
                claimed: dict[str, list[tuple[int, Obj]]] = {}
                for i, pv in enumerate(pvs):
                    ref = spec(pv).get("claimRef")
                    if isinstance(ref, dict):
                        key = f"{ref.get('namespace') or ''}/{ref.get('name') or ''}"
                        claimed.setdefault(key, []).append((i, pv))
                    else:
                        free.append((i, pv))
                idx[c_name] = (free, claimed)
            self.snapshot.cache[_PV_INDEX_KEY] = idx
        free, claimed = idx.get(cls, ([], {}))
        mine = claimed.get(claim_key)
        if not mine:
            return [pv for _, pv in free]
        return [pv for _, pv in sorted([*free, *mine], key=lambda t: t[0])]

    def _candidates(self, c: _Unbound) -> tuple[list[_Candidate], list[_Candidate]]:
        """(PVs pre-bound to the claim in list order, other usable PVs by capacity, stable)."""
        if c.candidates is not None:
            return c.candidates
        pvs = self._class_pvs(c.cls, c.key)
        vac_enabled = self.dialect.volume_attributes_class
        if not vac_enabled and c.vac:
            raise _FilterError(
                f"unsupported volumeAttributesClassName is set on claim {c.key} when the feature-gate "
                "VolumeAttributesClass is disabled"
            )
        if c.selector_error:
            raise _FilterError(f"error creating internal label selector for claim: {c.key}: invalid selector")
        prebound: list[_Candidate] = []
        sized: list[tuple[Fraction, _Candidate]] = []
        for pv in pvs:
            m, s = meta(pv), spec(pv)
            bound_to_claim = is_volume_bound_to_claim(pv, c.pvc)
            if isinstance(s.get("claimRef"), dict) and not bound_to_claim:
                continue
            capacity = s.get("capacity")
            pv_qty = quantity(capacity.get("storage") if isinstance(capacity, dict) else None)
            if pv_qty < c.requested or volume_mode_mismatch(c.pvc, pv):
                continue
            pv_vac = str(s.get("volumeAttributesClassName") or "")
            if (vac_enabled and c.vac != pv_vac) or (not vac_enabled and pv_vac):
                continue
            if m.get("deletionTimestamp"):
                continue
            entry = (str(m.get("name") or ""), pv, self._pv_terms(pv))
            if bound_to_claim:
                prebound.append(entry)
                continue
            if (pv.get("status") or {}).get("phase") != "Available":
                continue
            if c.selector is not None and not all(r.matches(_labels(m)) for r in c.selector):
                continue
            if pv_class(pv) != c.cls or not check_access_modes(c.pvc, pv):
                continue
            sized.append((pv_qty, entry))
        sized.sort(key=lambda t: t[0])
        c.candidates = (prebound, [e for _, e in sized])
        return c.candidates

    def _check_provisions(
        self,
        claims: list[_Unbound],
        node_info: NodeInfo,
        details: list[dict[str, Any]],
        provisions: list[tuple[_Unbound, int | None]],
    ) -> tuple[bool, bool]:
        """checkVolumeProvisions: (provisioning possible, enough capacity)."""
        labels = node_info.node.labels
        for c in claims:
            if not c.cls:
                raise _FilterError(f'no class for claim "{c.key}"')
            sc = self.snapshot.get("StorageClass", c.cls)
            if sc is None:
                raise _FilterError(f'failed to find storage class "{c.cls}"')
            provisioner = str(sc.get("provisioner") or "")
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                details.append({"claim": c.key, "no_matching_pv": True, "provisioner": provisioner})
                return False, True
            if not match_topology_selector_terms(sc.get("allowedTopologies"), labels):
                details.append({"claim": c.key, "storage_class": c.cls, "allowed_topologies": False})
                return False, True
            enough, capacity = self._has_enough_capacity(provisioner, c, labels)
            if not enough:
                details.append({"claim": c.key, "storage_class": c.cls, "requested": str(c.requested)})
                return True, False
            provisions.append((c, capacity))
        return True, True

    def _has_enough_capacity(
        self, provisioner: str, c: _Unbound, labels: dict[str, str]
    ) -> tuple[bool, int | None]:
        """hasEnoughCapacity: only for CSI drivers with storageCapacity: true; a node without a matching
        CSIStorageCapacity object has none. Also the matching object's `capacity` (Score reads it; the
        first match in input order, where upstream takes the informer's order)."""
        requests = (spec(c.pvc).get("resources") or {}).get("requests")
        if not isinstance(requests, dict) or "storage" not in requests:
            return True, None
        driver = self.snapshot.get("CSIDriver", provisioner)
        if driver is None or spec(driver).get("storageCapacity") is not True:
            return True, None
        size = _value(requests["storage"])
        for limit, topology, capacity in self._capacities(c.cls):
            if (
                limit is not None
                and limit >= size
                and topology is not None
                and all(r.matches(labels) for r in topology)
            ):
                return True, capacity
        return False, None

    def _capacities(self, cls: str) -> list[tuple[int | None, tuple[LabelRequirement, ...] | None, int]]:
        """CSIStorageCapacity objects of a class: (maximumVolumeSize or capacity, parsed nodeTopology,
        capacity)."""
        idx: dict[str, list[tuple[int | None, tuple[LabelRequirement, ...] | None, int]]] | None = (
            self.snapshot.cache.get(_CAPACITY_KEY)
        )
        if idx is None:
            idx = {}
            for cap in self.snapshot.kind("CSIStorageCapacity"):
                raw = cap.get("maximumVolumeSize")
                if raw is None:
                    raw = cap.get("capacity")
                limit = None if raw is None else _value(raw)
                topo = cap.get("nodeTopology")
                reqs = parse_label_selector(topo) if isinstance(topo, dict) else None
                idx.setdefault(str(cap.get("storageClassName") or ""), []).append(
                    (limit, reqs, _value(cap.get("capacity")))
                )
            self.snapshot.cache[_CAPACITY_KEY] = idx
        return idx.get(cls, [])

    def _pv_terms(self, pv: Obj) -> list[NodeSelectorTerm] | None:
        cache: dict[str, list[NodeSelectorTerm] | None] = self.snapshot.cache.setdefault(_TERMS_KEY, {})
        name = str(meta(pv).get("name") or "")
        if name not in cache:
            cache[name] = pv_node_affinity_terms(pv)
        return cache[name]

    def _bound_terms(self, pv: Obj, csinode: Obj | None) -> list[NodeSelectorTerm] | None:
        """The node affinity checkBoundClaims tests: of the CSI translation when the node migrated the
        PV's in-tree plugin (tryTranslatePVToCSI), else the PV's own."""
        plugin = trans.pv_plugin(pv)
        if plugin is None or not trans.migration_on(plugin, csinode):
            return self._pv_terms(pv)
        cache: dict[str, list[NodeSelectorTerm] | None] = self.snapshot.cache.setdefault(_TRANSLATED_KEY, {})
        name = str(meta(pv).get("name") or "")
        if name not in cache:
            try:
                trans.pv_volume_handle(plugin, pv)
            except trans.TranslationError as e:
                raise _FilterError(f"could not translate pv: {e}") from None
            raw = trans.translated_pv_affinity(plugin, pv)
            cache[name] = None if raw is None else parse_node_selector_terms(raw)
        return cache[name]

    # ------------------------------------------------------------------ Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        # Without StorageCapacityScoring the plugin has no scorer and skips (v1.36 and older). With it
        # (v1.37), PreScore succeeds for every pod, so VolumeBinding scores even pods without claims (0).
        return SUCCESS if self.dialect.storage_capacity_scoring else SKIP

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """Score: per storage class, requested over capacity through the shape (default: 0% -> 100,
        100% -> 0); the mean over classes, rounded. Static bindings when there are any, else the dynamic
        provisions that found a CSIStorageCapacity."""
        st: _State | None = state.read(_STATE_KEY)
        volumes = st.by_node.get(node_info.name) if st is not None else None
        if volumes is None:
            return 0, SUCCESS
        static, dynamic = volumes
        classes: dict[str, list[int]] = {}
        if static:
            for c, pv in static:
                r = classes.setdefault(str(spec(pv).get("storageClassName") or ""), [0, 0])
                cap = spec(pv).get("capacity")
                r[0] += _value((_requests(c.pvc) or {}).get("storage"))
                r[1] += _value(cap.get("storage") if isinstance(cap, dict) else None)
        else:
            for c, capacity in dynamic:
                if capacity is None:
                    continue
                r = classes.setdefault(c.cls, [0, 0])
                # `=`, not `+=`: two claims of one class share the node's one capacity.
                r[1] = capacity
                r[0] += _value((_requests(c.pvc) or {}).get("storage"))
        return self._capacity_score(classes), SUCCESS

    def _capacity_score(self, classes: dict[str, list[int]]) -> int:
        """scorer.go buildScorerFunction over VolumeBindingArgs.shape (scores x10, as New scales them)."""
        if not classes:
            return 0
        raw = broken_linear([(u, s * 10) for u, s in _shape(self.handle.args)])
        total = 0
        for requested, capacity in classes.values():
            if capacity == 0 or requested > capacity:
                total += raw(100)
            else:
                total += raw(requested * 100 // capacity)
        return go_round(total / len(classes))
