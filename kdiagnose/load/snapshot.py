"""Raw API objects -> Snapshot. Unknown kinds are counted and skipped, never an error."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from operator import attrgetter
from typing import Any

from kdiagnose.errors import InputError
from kdiagnose.load.admission import AdmissionContext, admit_pod, admit_pvc
from kdiagnose.load.compact import BoundPod, Template, template_pod
from kdiagnose.load.dra_strategy import drop_disabled_dra_fields
from kdiagnose.load.gcpause import paused_gc
from kdiagnose.load.order import CLUSTER_SCOPED_KINDS, canonical_order
from kdiagnose.load.raw import KNOWN_KINDS, RawObject
from kdiagnose.model.objects import NO_POD_RESOURCES as _NO_POD_RESOURCES
from kdiagnose.model.objects import SPEC_SLOTS, ModelError, Node, Pod, pod_from_row
from kdiagnose.model.requests import finish_pod
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.model.validation import validate
from kdiagnose.versions import Dialect

__all__ = ["KNOWN_KINDS", "build_snapshot", "partial_dump_warnings"]

Obj = dict[str, Any]


def _kind_of(raw: RawObject) -> str:
    kind = raw.kind
    return kind if isinstance(kind, str) else ""


@paused_gc  # 150,000 pods: the cycle collector would double the build time (load/gcpause.py)
def build_snapshot(
    objects: Iterable[RawObject],
    dialect: Dialect,
    *,
    list_kinds: Iterable[str] = (),
    keep_raw: bool = False,
    admit: bool = True,
    unreadable: dict[str, str] | None = None,
) -> Snapshot:
    """Group objects by kind, admit pods as the API server would, and build the typed Snapshot.
    `unreadable`: what a live read could not read, and why (Snapshot.unreadable)."""
    by_kind: dict[str, list[RawObject]] = {}
    skipped: Counter[str] = Counter()
    for raw in objects:
        kind = raw.kind
        # by_kind.get first: one lookup per object of a kind already seen (150,000 bound pods), no new list
        group = by_kind.get(kind) if isinstance(kind, str) else None
        if group is not None:
            group.append(raw)
        elif isinstance(kind, str) and kind in KNOWN_KINDS:
            by_kind[kind] = [raw]
        else:
            skipped[_kind_of(raw) or "<no kind>"] += 1
    # Informer order, whatever order the input has (README "Determinism"): every decision and report is
    # then the same for any permutation of the input documents.
    for kind, raws in by_kind.items():
        by_kind[kind] = canonical_order(raws, namespaced=kind not in CLUSTER_SCOPED_KINDS)
    # What the API server would have rejected (wrong types, invalid operators, negative quantities) is an
    # input error naming the field, not a silently different verdict (model/validation.py).
    fast = admit and not keep_raw
    compacts = _Compacts(dialect)
    valid: dict[Template, bool] = {}
    for raws in by_kind.values():
        for raw in raws:
            rec = raw.compact
            if rec is not None:
                # A compact record's metadata and status were checked where it was decoded; its spec is
                # checked here, once per distinct spec (the pods of a spec that fails are expanded).
                if fast and isinstance(rec, BoundPod):
                    ok = valid.get(rec.template)
                    if ok is None:
                        ok = valid[rec.template] = compacts.valid(rec)
                    if ok:
                        continue
                raw.expand()  # from here on the pod takes the per-object path
            elif raw.valid:
                continue  # checked where it was decoded (load/parallel.py)
            try:
                validate(raw.obj)
            except ModelError as e:
                raise InputError(f"{raw.where}: {e}") from None
    present = set(by_kind) | (set(list_kinds) & KNOWN_KINDS)
    plain: dict[str, list[Obj]] = {
        k: [r.obj for r in v] for k, v in by_kind.items() if k not in ("Pod", "Node")
    }
    if not dialect.dra_enabled:
        # resource.k8s.io/v1 does not exist before v1.34 and the DRA gate is off: the API server drops claims.
        for k in ("ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass"):
            n = len(plain.pop(k, []))
            if n:
                skipped[k] += n
            present.discard(k)
    elif admit:
        # What a v1.34/v1.35 API server drops from DRA objects created with those gates off (load/dra_strategy.py).
        drop_disabled_dra_fields(plain, dialect)
    if not dialect.dra_device_taint_rules:
        # DRADeviceTaintRules is off before v1.37 (and its API not served by default): rules do nothing.
        n = len(plain.pop("DeviceTaintRule", []))
        if n:
            skipped["DeviceTaintRule"] += n
        present.discard("DeviceTaintRule")
    ctx = AdmissionContext(
        plain.get("PriorityClass", []),
        plain.get("LimitRange", []),
        plain.get("RuntimeClass", []),
        plain.get("StorageClass", []),
        present=present,
    )
    if admit:
        for pvc in plain.get("PersistentVolumeClaim", []):
            admit_pvc(pvc, ctx)

    nodes: list[Node] = []
    seen_nodes: set[str] = set()
    for raw in by_kind.get("Node", []):
        node = raw.node
        raw.node = None  # taken once: a second snapshot of these objects gets Nodes of its own
        if node is None or keep_raw:
            try:
                node = Node(raw.obj, keep_raw=keep_raw)
            except ModelError as e:
                raise InputError(f"{raw.where}: {e}") from None
        if node.name in seen_nodes:
            continue  # the same node twice (two files of one dump): canonical_order put the newest first
        seen_nodes.add(node.name)
        nodes.append(node)

    pods: list[Pod] = []
    seen_pods: set[str] = set()
    refused: list[str] = []
    for raw in by_kind.get("Pod", []):
        rec = raw.compact
        if isinstance(rec, BoundPod):
            key = rec.key
            if key in seen_pods:
                rec.pre = None
                continue  # canonical_order put the one kept first
            fast_pod = compacts.pod(rec)
            if fast_pod is not None:
                seen_pods.add(key)
                pods.append(fast_pod)
                continue
            raw.expand()
        obj = raw.obj
        if admit:
            if not dialect.dra_enabled:
                _drop_claims(obj)
            if not dialect.pod_level_resources and isinstance(obj.get("spec"), dict):
                obj["spec"].pop("resources", None)
            if not dialect.volume_bind_mount_options:
                _drop_bind_mount_options(obj)
            rejected: list[str] = []
            admit_pod(obj, ctx, rejected)
            if rejected:
                # The API server would not have created this pod: it never reaches a scheduler, so it is
                # left out (as kube-scheduler never sees it) and the report says why.
                refused.append(f"{raw.where}: {_rejection(obj, rejected)}; not replayed")
                continue
        try:
            # Pending pods keep their object: remedies patch it and what-if replays rebuild it.
            pending = not (isinstance(obj.get("spec"), dict) and obj["spec"].get("nodeName"))
            pod = Pod(obj, keep_raw=keep_raw or pending)
        except ModelError as e:
            raise InputError(f"{raw.where}: {e}") from None
        if pod.key in seen_pods:
            continue
        seen_pods.add(pod.key)
        finish_pod(pod, dialect)
        pods.append(pod)

    snap = Snapshot(dialect, nodes, pods, plain, present, skipped, unreadable=unreadable)
    snap.warnings.extend(partial_dump_warnings(snap))
    snap.warnings.extend(_unresolved_warnings(ctx))
    snap.warnings.extend(refused)
    return snap


# ------------------------------------------------------------------------- compact bound pods (load/compact.py)
# A streamed dump's bound pods share far fewer specs than there are pods. Each distinct spec is validated,
# admitted and modelled once with the per-object code; each pod's metadata and status were checked and
# modelled where the item was decoded (its Row, in the decoding worker when there is one), so here a Pod is
# its slots filled (model.objects.pod_from_row). Anything unusual (a spec without spec.priority, which
# admission would change with the cluster's PriorityClasses; any error) was decoded the per-object way,
# which then reports exactly what it always did. tests/test_compact_pods.py compares both paths pod by pod.


class _Compacts:
    """The release-dependent part of the compact path: template_pod models a spec as a release with every
    feature on would; a release without DRA or pod-level resources drops what its API server drops. That
    is done once per template (its release template, a Pod holding the spec slots), the requests computed
    once per (template, container statuses); each pod is then its row's slots filled."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.requests: dict[tuple[Any, ...], tuple[dict[str, int], int, int]] = {}
        # Template -> (release template, requests of its pods without container statuses or None yet,
        # whether its spec slots are the model's: a pod built ahead, BoundPod.pre, is then its pod).
        self.templates: dict[Template, list[Any] | None] = {}

    def _release_template(self, tpl: Template) -> list[Any] | None:
        got = self.templates.get(tpl, False)
        if got is not False:
            return got  # type: ignore[return-value]
        model = template_pod(tpl)
        if model is None:
            self.templates[tpl] = None
            return None
        t = Pod.__new__(Pod)
        for slot in SPEC_SLOTS:
            setattr(t, slot, getattr(model, slot))
        dialect = self.dialect
        if not dialect.dra_enabled and t.resource_claims:
            # build_snapshot's _drop_claims: spec.resourceClaims (status.resourceClaimStatuses per pod).
            t.resource_claims = []
        if not dialect.pod_level_resources:
            t.pod_resources = _NO_POD_RESOURCES
        if not dialect.volume_bind_mount_options:
            # _drop_bind_mount_options: the containers as if their mounts had no bindMountOptions (the
            # lists themselves kept when no mount has them, so a pod built ahead from the model fits).
            if any(c.bind_mount_options for c in t.containers):
                t.containers = [
                    replace(c, bind_mount_options=False) if c.bind_mount_options else c for c in t.containers
                ]
            if any(c.bind_mount_options for c in t.init_containers):
                t.init_containers = [
                    replace(c, bind_mount_options=False) if c.bind_mount_options else c
                    for c in t.init_containers
                ]
        # A pod built ahead from the model (BoundPod.pre) is this template's pod when every spec slot is
        # the model's own value.
        same = all(getattr(t, slot) is getattr(model, slot) for slot in SPEC_SLOTS)
        out = self.templates[tpl] = [t, None, same]
        return out

    def valid(self, rec: BoundPod) -> bool:
        """The record's spec passes validation and admission (template_pod): it takes the compact path."""
        return self._release_template(rec.template) is not None

    def pod(self, rec: BoundPod) -> Pod | None:
        """The pod build_snapshot's per-object path would make of `rec`, or None to take that path."""
        entry = self.templates.get(rec.template, False)
        if entry is False:
            entry = self._release_template(rec.template)
        if entry is None:
            return None
        assert isinstance(entry, list)
        pre = rec.pre
        if pre is None:
            pod = pod_from_row(entry[0], rec.row)
        else:
            rec.pre = None  # taken once (it becomes the snapshot's pod), or dropped
            pod = pre if entry[2] else pod_from_row(entry[0], rec.row)
        if not pod.container_statuses:
            done = entry[1]
            if done is None:
                finish_pod(pod, self.dialect)
                entry[1] = (pod.requests, pod.non_zero_cpu, pod.non_zero_mem)
            else:
                pod.requests, pod.non_zero_cpu, pod.non_zero_mem = done
            if pod.resource_claim_statuses and not self.dialect.dra_enabled:
                pod.resource_claim_statuses = []
            return pod
        if not self.dialect.dra_enabled:
            pod.resource_claim_statuses = []
        # finish_pod reads the spec part (shared), the container statuses and the resize condition.
        key: tuple[Any, ...] = (
            rec.template,
            tuple((n, tuple(a.items()), tuple(b.items())) for n, (a, b) in pod.container_statuses.items()),
            # requests.py _resize_infeasible: the first PodResizePending condition's reason.
            next(
                (
                    c.get("reason") == "Infeasible"
                    for c in pod.conditions
                    if c.get("type") == "PodResizePending"
                ),
                False,
            ),
        )
        got = self.requests.get(key)
        if got is None:
            finish_pod(pod, self.dialect)
            self.requests[key] = (pod.requests, pod.non_zero_cpu, pod.non_zero_mem)
        else:
            pod.requests, pod.non_zero_cpu, pod.non_zero_mem = got
        return pod


def _rejection(obj: Obj, reasons: list[str]) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    name = str(meta.get("name") or meta.get("generateName") or "")
    return (
        f"the API server would reject pod {meta.get('namespace') or 'default'}/{name}: "
        f'pods "{name}" is forbidden: ' + "; ".join(reasons)
    )


def _unresolved_warnings(ctx: AdmissionContext) -> list[str]:
    """Pods naming a PriorityClass or RuntimeClass when the input has none of that kind."""
    out = []
    for kind, assumed in (
        ("PriorityClass", "priority 0 assumed"),
        ("RuntimeClass", "no overhead or scheduling added"),
    ):
        names = sorted(name for k, name in ctx.unresolved if k == kind)
        if names:
            pods = sum(n for (k, _), n in ctx.unresolved.items() if k == kind)
            out.append(
                f"{pods} pod(s) name {kind} {', '.join(names[:5])}{' ...' if len(names) > 5 else ''} "
                f"but the input has no {kind}es: {assumed}"
            )
    return out


def _drop_claims(obj: Obj) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.pop("resourceClaims", None)
        for key in ("containers", "initContainers"):
            for c in spec.get(key) or []:
                if isinstance(c, dict) and isinstance(c.get("resources"), dict):
                    c["resources"].pop("claims", None)
    status = obj.get("status")
    if isinstance(status, dict):
        status.pop("resourceClaimStatuses", None)


def partial_dump_warnings(snap: Snapshot) -> list[str]:
    """Hints that the input is not the whole cluster (which changes the verdict of spread/affinity)."""
    out = []
    # set(map(attrgetter)) rather than a comprehension: one C loop over 150,000 pods.
    namespaces = set(map(attrgetter("namespace"), snap.pods))
    # A dump whose Namespace objects are all among the pods' namespaces has every namespace there is.
    listed = {str((ns.get("metadata") or {}).get("name") or "") for ns in snap.kind("Namespace")}
    whole = snap.has("Namespace") and bool(listed) and listed <= namespaces
    # `kubectl get pods -o yaml` without -A, or a cluster-info dump without -A (current namespace + kube-system).
    if (
        not whole
        and snap.node_infos
        and len(snap.pods) > 20
        and (len(namespaces) == 1 or namespaces <= {"default", "kube-system"})
    ):
        out.append(
            f"the input has pods of only {len(namespaces)} namespace(s) ({', '.join(sorted(namespaces))}): "
            "was the dump taken without -A/--all-namespaces? Resource, affinity and spread checks may be wrong"
        )
    if snap.pods and not snap.node_infos:
        out.append("the input has pods but no nodes: nothing to schedule onto")
    elif not snap.node_infos:
        out.append("the input has no Node objects: nothing to schedule onto (kubectl get nodes -o yaml)")
    missing = sorted(set(map(attrgetter("node_name"), snap.pods)).difference(snap.node_info_by_name, ("",)))
    if missing and snap.node_infos:
        out.append(
            f"{len(missing)} node(s) that pods are bound to are missing from the input (e.g. {missing[0]}): "
            "was the node list filtered?"
        )
    return out


def _drop_bind_mount_options(obj: Obj) -> None:
    """volumeMounts[].bindMountOptions of every container, as the API server drops them with the gate off."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                for m in c.get("volumeMounts") or []:
                    if isinstance(m, dict):
                        m.pop("bindMountOptions", None)
