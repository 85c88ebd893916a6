"""The CI gate behind `kdiagnose check`: place every replica of every workload, classify, apply the policy.

Workloads are processed in input order and their replicas one after another. Each replica is admitted as
the API server would (load/admission.py), replayed with the scheduler, and, when it fits, bound in the
simulation on the node the scheduler would choose, so later replicas and workloads see it (resources,
ports, anti-affinity, spread). The real scheduler breaks ties between equally scored nodes at random;
the replay takes the lowest node name (runner.py), so the result is deterministic.

A replica that fits only by preemption is placed on the nominated node with its victims evicted (what the
scheduler would do next). The first replica that fits neither way stops the workload: later replicas
share its template and see the same cluster, so they would fail alike ("k of N fit; replica k+1: ...").
A DaemonSet is checked node by node on the nodes its controller targets (daemon_controller.go
NodeShouldRunDaemonPod: nodeSelector, required node affinity, untolerated NoSchedule/NoExecute taints).
The outcomes and `--fail-on` are in policy.py, the result types in result.py.
"""

from __future__ import annotations

import copy
import re
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, BinaryIO

from kdiagnose.errors import InputError, UsageError
from kdiagnose.gate.policy import FAIL_ON, Outcome, apply_policy, ignore_reason, scale_up_verdict
from kdiagnose.gate.result import (
    GateOptions,
    GateResult,
    Headroom,
    NodeFailure,
    Placement,
    WorkloadResult,
    first_line,
)
from kdiagnose.load.admission import AdmissionContext, admit_pod, default_storage_class
from kdiagnose.load.manifests import Workload, daemon_pod_for_node, daemon_predicate_pod, expand_workloads
from kdiagnose.load.raw import where
from kdiagnose.model.objects import ModelError, Pod
from kdiagnose.model.requests import finish_pod
from kdiagnose.remedies.autoscaler import SCALE_UP_KINDS
from kdiagnose.remedies.safety import platform_warning
from kdiagnose.results import PodReport, Remedy
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.scheduler.plugins.helper import storage as st
from kdiagnose.scheduler.plugins.helper.node_selector import RequiredNodeSelector, match_label_selector
from kdiagnose.scheduler.plugins.tainttoleration.taint_toleration import find_untolerated_taint

if TYPE_CHECKING:
    from kdiagnose.gate.locate import Sources
    from kdiagnose.model.pools import PoolSpec
    from kdiagnose.model.snapshot import Snapshot
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.profiles import Profile

__all__ = ["RemedyFn", "default_remedy_fn", "load_workloads", "run_gate"]

Obj = dict[str, Any]
RemedyFn = Callable[["Snapshot", Scheduler, "Diagnosis"], "tuple[list[Remedy], list[str]]"]

_SYSTEM_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")


# ---------------------------------------------------------------------------------------------- input


def load_workloads(
    paths: list[str],
    stdin: BinaryIO | None = None,
    default_namespace: str = "default",
    sources: Sources | None = None,
) -> tuple[list[Workload], dict[str, int]]:
    """Read the manifests (files, directories, `-`) and expand the workload kinds; others are counted.
    `sources` keeps stdin's text, so findings can name its lines (files are read again when needed)."""
    import io

    from kdiagnose.load.files import load_paths
    from kdiagnose.load.limits import read_stream

    if sum(1 for p in paths if p == "-") > 1:
        raise UsageError("-f - (stdin) can be given only once")
    stream = None
    if "-" in paths:
        data = read_stream(stdin if stdin is not None else sys.stdin.buffer, "<stdin>")
        if sources is not None:
            sources.set_stdin(data)
        stream = io.BytesIO(data)
    result = load_paths(paths, stream)
    return expand_workloads(result.objects, default_namespace)


# ---------------------------------------------------------------------------------------------- the loop


def _default_storage_class(snapshot: Snapshot) -> str | None:
    """DefaultStorageClass admission, as for every other PVC (load/admission.py)."""
    return default_storage_class(snapshot.kind("StorageClass"))


class _Gate:
    def __init__(
        self,
        snapshot: Snapshot,
        profiles: list[Profile] | None,
        opts: GateOptions,
        remedy_fn: RemedyFn | None,
    ) -> None:
        self.snapshot = snapshot
        self.scheduler = Scheduler(snapshot, profiles)
        # The last pod try_place bound: of another OS/arch than its images run on (platform_warning), or "".
        self.platform_note = ""
        self.profiles = profiles
        self.opts = opts
        self.remedy_fn = remedy_fn
        # `present`: a kind the snapshot lists, even empty, is known to be complete; one it leaves out is
        # "not checked" (admission_notes), never silently passed.
        self.ctx = AdmissionContext(
            snapshot.kind("PriorityClass"),
            snapshot.kind("LimitRange"),
            snapshot.kind("RuntimeClass"),
            present=snapshot.present,
        )
        self.default_sc = _default_storage_class(snapshot)

    # ------------------------------------------------------------ admission

    def admit(self, obj: Obj, rejections: list[str] | None = None) -> Pod:
        """The pod as admission makes it; what the API server would refuse to create instead is appended
        to `rejections` (RuntimeClass not found, an overhead mismatch, ...: load/admission.py)."""
        dialect = self.snapshot.dialect
        spec = obj.get("spec")
        if isinstance(spec, dict):
            if not dialect.dra_enabled:
                spec.pop("resourceClaims", None)
            if not dialect.pod_level_resources:
                spec.pop("resources", None)
            for key in ("containers", "initContainers"):
                for c in spec.get(key) or []:
                    for p in (c.get("ports") or []) if isinstance(c, dict) else []:
                        if isinstance(p, dict):
                            p.setdefault("protocol", "TCP")  # pkg/apis/core/v1/defaults.go
        admit_pod(obj, self.ctx, rejections)
        try:
            pod = Pod(obj, keep_raw=True)
        except ModelError as e:
            raise InputError(str(e)) from None
        finish_pod(pod, dialect)
        return pod

    def admission_error(self, obj: Obj, w: Workload) -> str | None:
        """What the Priority admission plugin rejects: a priorityClassName the cluster does not have."""
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        name = spec.get("priorityClassName") if isinstance(spec, dict) else None
        if not name or name in _SYSTEM_PRIORITY_CLASSES:
            return None
        if self.snapshot.get("PriorityClass", str(name)) is not None:
            return None
        if not self.snapshot.has("PriorityClass"):
            note = f"priorityClassName {name} not checked: the snapshot has no PriorityClasses (priority 0 assumed)"
            if note not in w.notes:
                w.notes.append(note)
            return None
        pod_name = (obj.get("metadata") or {}).get("name")
        return f'pods "{pod_name}" is forbidden: no PriorityClass with name {name} was found'

    def admission_notes(self, obj: Obj, w: Workload) -> None:
        """What admission could not check because the snapshot leaves out a kind it reads, on the workload,
        worded like the PriorityClass note above: LimitRanger's defaults (a container without a cpu or
        memory request would get a namespace's default request, which changes where it fits) and a
        runtimeClassName (its overhead and scheduling constraints)."""

        def d(v: Any) -> dict[str, Any]:
            return v if isinstance(v, dict) else {}

        spec = d(obj.get("spec"))
        notes: list[str] = []
        if not self.snapshot.has("LimitRange"):
            bare = []
            for key in ("initContainers", "containers"):
                containers = spec.get(key)
                for c in containers if isinstance(containers, list) else []:
                    if not isinstance(c, dict):
                        continue
                    res = d(c.get("resources"))
                    req, lim = d(res.get("requests")), d(res.get("limits"))
                    missing = [r for r in ("cpu", "memory") if r not in req and r not in lim]
                    if missing:
                        bare.append(f"{c.get('name') or '?'} ({', '.join(missing)})")
            if bare:
                notes.append(
                    "LimitRange defaults not checked: the snapshot has no LimitRanges; placed with no request "
                    f"where none is set: container {', '.join(bare)} "
                    "(add limitranges to the snapshot's kubectl get)"
                )
        name = str(spec.get("runtimeClassName") or "")
        if name and not self.snapshot.has("RuntimeClass"):
            notes.append(
                f"runtimeClassName {name} not checked: the snapshot has no RuntimeClasses (no overhead or "
                "node scheduling constraints added)"
            )
        for note in notes:
            if note not in w.notes:
                w.notes.append(note)

    def add_claims(self, claims: Iterable[Obj]) -> None:
        for claim in claims:
            meta = claim["metadata"]
            if self.snapshot.get("PersistentVolumeClaim", meta["name"], meta["namespace"]) is not None:
                continue  # the StatefulSet controller reuses a claim that already exists
            spec = claim.setdefault("spec", {})
            if "storageClassName" not in spec and self.default_sc is not None:
                spec["storageClassName"] = self.default_sc
            spec.setdefault("volumeMode", "Filesystem")
            self.snapshot.add_object("PersistentVolumeClaim", claim)

    def add_owners(self, w: Workload) -> None:
        for owner in w.owners:
            meta = owner["metadata"]
            if self.snapshot.get(owner["kind"], meta["name"], meta["namespace"]) is None:
                self.snapshot.add_object(owner["kind"], owner)

    # ------------------------------------------------------------ existing pods

    def existing_pods(self, w: Workload) -> list[Pod]:
        """The workload's pods already in the snapshot: same controller, or same namespace and selector."""
        owner_names = {(w.kind, w.name)}
        if w.kind == "Deployment":
            for rs in self.snapshot.kind("ReplicaSet"):
                meta = rs.get("metadata") or {}
                if meta.get("namespace", "default") != w.namespace:
                    continue
                for ref in meta.get("ownerReferences") or []:
                    if (
                        isinstance(ref, dict)
                        and ref.get("kind") == "Deployment"
                        and ref.get("name") == w.name
                    ):
                        owner_names.add(("ReplicaSet", str(meta.get("name"))))
            owner_names.update(("ReplicaSet", str(o["metadata"]["name"])) for o in w.owners)
        selector = w.selector
        if w.kind == "ReplicationController" and selector is not None and "matchLabels" not in selector:
            selector = {"matchLabels": selector}
        out = []
        for p in self.snapshot.pods:
            if p.namespace != w.namespace:
                continue
            if w.kind == "Pod":
                if p.name == w.name:
                    out.append(p)
                continue
            ref = p.controller_ref()
            if ref is not None:
                if (str(ref.get("kind")), str(ref.get("name"))) in owner_names:
                    out.append(p)
            elif selector and match_label_selector(selector, p.labels):
                out.append(p)
        return out

    # ------------------------------------------------------------ placing

    def remedies(self, d: Diagnosis) -> tuple[list[Remedy], list[str]]:
        if self.remedy_fn is None or not d.handled or d.preenqueue is not None:
            return [], []
        return self.remedy_fn(self.snapshot, self.scheduler, d)

    def remedies_with_siblings(self, d: Diagnosis, w: Workload, i: int) -> tuple[list[Remedy], list[str]]:
        """Remedies for replica i with the workload's later replicas pending beside it, so a scale-up counts
        the nodes all of them need (scale_pool packs a workload's pending pods) and the autoscaler's room is
        checked against that count. Claims are not added: StatefulSet replicas stay the first one's alone."""
        from kdiagnose.remedies.scale_pool import MAX_PACKED_PODS

        later: list[Pod] = []
        for j in range(i + 1, min(w.replicas, i + MAX_PACKED_PODS)):
            obj, claims = w.replica(j)
            if claims or self.admission_error(obj, w) is not None:
                break
            later.append(self.admit(obj))
        for p in later:
            self.snapshot.add_pending(p)
        try:
            return self.remedies(d)
        finally:
            if later:
                self.snapshot.remove_pods(later)
                self.scheduler.invalidate()

    def failure_outcome(self, d: Diagnosis, remedies: list[Remedy]) -> Outcome:
        if not d.handled or d.preenqueue is not None:
            return Outcome.NOT_CHECKED
        if any(r.kind in SCALE_UP_KINDS for r in remedies):
            return Outcome.SCALE_UP
        return Outcome.UNSCHEDULABLE

    def assume_volumes(self, pod: Pod, node_name: str) -> None:
        """What binding the pod does to its unbound WaitForFirstConsumer claims (volume_binding.go
        AssumePodVolumes, then the PV controller): each takes the smallest matching Available PV of its
        class on that node, else is marked for provisioning there (selected-node). Later replicas then no
        longer see that PV as free."""
        snap = self.snapshot
        ni = snap.node_info_by_name.get(node_name)
        if ni is None or not pod.volumes:
            return
        labels = ni.node.labels
        taken: set[str] = set()
        for _, name, _ in st.pod_claims(pod):
            pvc = st.get_pvc(snap, pod.namespace, name)
            if pvc is None or st.is_fully_bound(pvc) or st.spec(pvc).get("volumeName"):
                continue
            cls = st.pvc_class(pvc)
            sc = snap.get("StorageClass", cls) if cls else None
            if sc is None or st.binding_mode(sc) != "WaitForFirstConsumer":
                continue
            requests = (st.spec(pvc).get("resources") or {}).get("requests") or {}
            wanted = st.quantity(requests.get("storage") if isinstance(requests, dict) else None)
            best: Obj | None = None
            for pv in st.pvs_by_class(snap).get(cls, []):
                pv_name = str(st.meta(pv).get("name") or "")
                capacity = st.spec(pv).get("capacity") or {}
                size = st.quantity(capacity.get("storage") if isinstance(capacity, dict) else None)
                if (
                    pv_name in taken
                    or isinstance(st.spec(pv).get("claimRef"), dict)
                    or (pv.get("status") or {}).get("phase") != "Available"
                    or size < wanted
                    or st.volume_mode_mismatch(pvc, pv)
                    or not st.check_access_modes(pvc, pv)
                    or not st.pv_terms_match(st.pv_node_affinity_terms(pv), labels)
                ):
                    continue
                best_size = (
                    st.quantity((st.spec(best).get("capacity") or {}).get("storage")) if best else None
                )
                if best is None or (best_size is not None and size < best_size):
                    best = pv
            new_pvc = copy.deepcopy(pvc)
            meta = new_pvc.setdefault("metadata", {})
            if best is not None:
                pv_name = str(st.meta(best).get("name"))
                taken.add(pv_name)
                new_pv = copy.deepcopy(best)
                new_pv.setdefault("spec", {})["claimRef"] = {
                    "kind": "PersistentVolumeClaim",
                    "namespace": pod.namespace,
                    "name": name,
                }
                new_pv["status"] = {"phase": "Bound"}
                snap.replace_object("PersistentVolume", best, new_pv)
                new_pvc.setdefault("spec", {})["volumeName"] = pv_name
                meta.setdefault("annotations", {})[st.ANN_BIND_COMPLETED] = "yes"
                new_pvc["status"] = {"phase": "Bound"}
            else:
                meta.setdefault("annotations", {})[st.ANN_SELECTED_NODE] = node_name
            snap.replace_object("PersistentVolumeClaim", pvc, new_pvc)

    def try_place(self, pod: Pod) -> tuple[Diagnosis, Placement | None]:
        """Replay one pod; bind it where it fits (evicting the victims when only preemption makes room)."""
        d = self.scheduler.diagnose(pod)
        self.platform_note = ""
        if d.scheduled and d.chosen:
            # Before the bind: once bound, the pod itself counts among "where pods with these images run".
            self.platform_note = platform_warning(self.snapshot, d)
            self.snapshot.bind(pod, d.chosen)
            self.assume_volumes(pod, d.chosen)
            self.scheduler.invalidate()
            return d, Placement(pod.key, d.chosen, "fits")
        if d.preemption is not None:
            victims = list(d.preemption.victims)
            self.snapshot.remove_pods(victims)
            self.snapshot.bind(pod, d.preemption.nominated_node)
            self.assume_volumes(pod, d.preemption.nominated_node)
            self.scheduler.invalidate()
            return d, Placement(
                pod.key, d.preemption.nominated_node, "preemption", sorted(v.key for v in victims)
            )
        return d, None

    def place_replicas(self, w: Workload, r: WorkloadResult) -> None:
        r.total = w.replicas
        for i in range(w.replicas):
            obj, claims = w.replica(i)
            rejected = self.admission_error(obj, w)
            if rejected is not None:
                r.failed_replica, r.message, r.outcome = i, rejected, Outcome.UNSCHEDULABLE
                return
            if i == 0:
                self.admission_notes(obj, w)
            refused: list[str] = []
            pod = self.admit(obj, refused)
            if refused:
                # The API server would not create the pod at all: no replay, whatever the nodes.
                name = (obj.get("metadata") or {}).get("name")
                r.failed_replica, r.outcome = i, Outcome.UNSCHEDULABLE
                r.message = f'pods "{name}" is forbidden: ' + "; ".join(refused)
                return
            self.add_claims(claims)
            d, placed = self.try_place(pod)
            if placed is not None:
                r.placements.append(placed)
                # Fits by labels and taints, yet on a node of another OS/arch than its images run on: said
                # once, for the first replica it happens to.
                if self.platform_note and not any(" platform: " in x for x in r.notes):
                    r.notes.append(f"replica {i + 1}: {self.platform_note}")
                if placed.how == "preemption":
                    r.fit_preemption += 1
                    r.outcome = Outcome.PREEMPTION
                else:
                    r.fit_now += 1
                continue
            remedies, notes = self.remedies_with_siblings(d, w, i)
            r.failed_replica = i
            r.failure = PodReport(diagnosis=d, remedies=remedies, remedy_notes=notes, owner=w.key)
            r.message = first_line(r.failure)
            r.outcome = self.failure_outcome(d, remedies)
            if r.outcome == Outcome.SCALE_UP:
                r.scale_up_ok, r.scale_up = scale_up_verdict(remedies)
            return

    def place_daemon(self, w: Workload, r: WorkloadResult) -> None:
        pred_obj = daemon_predicate_pod(w)
        rejected = self.admission_error(pred_obj, w)
        if rejected is not None:
            r.message, r.outcome, r.failed_replica = rejected, Outcome.UNSCHEDULABLE, 0
            return
        self.admission_notes(pred_obj, w)
        pred = Pod(pred_obj)
        required = RequiredNodeSelector.of(pred.node_selector, pred.affinity)
        pinned = str((w.template.get("spec") or {}).get("nodeName") or "")
        running = set()
        if not self.opts.replace:
            for p in self.snapshot.pods:
                ref = p.controller_ref()
                if (
                    p.node_name
                    and p.namespace == w.namespace
                    and ref is not None
                    and ref.get("kind") == "DaemonSet"
                    and ref.get("name") == w.name
                ):
                    running.add(p.node_name)
        targeted = []
        for ni in sorted(self.snapshot.node_infos, key=lambda x: x.name):
            node = ni.node
            if pinned and pinned != node.name:
                r.excluded_nodes[node.name] = f"the template sets spec.nodeName {pinned}"
                continue
            if not required.match(node):
                r.excluded_nodes[node.name] = (
                    "does not match the template's nodeSelector/required node affinity"
                )
                continue
            taint = find_untolerated_taint(node.taints, pred.tolerations)
            if taint is not None:
                r.excluded_nodes[node.name] = f"untolerated taint {taint}"
                continue
            targeted.append(node.name)
        r.total = len(targeted)
        worst = Outcome.FITS
        for node_name in targeted:
            if node_name in running:
                r.placements.append(Placement(f"{w.namespace}/{w.name}@{node_name}", node_name, "existing"))
                r.fit_now += 1
                continue
            refused: list[str] = []
            pod = self.admit(daemon_pod_for_node(w, node_name), refused)
            if refused:
                r.failed_replica, r.outcome = 0, Outcome.UNSCHEDULABLE
                r.message = f'pods "{pod.name}" is forbidden: ' + "; ".join(refused)
                return
            d, placed = self.try_place(pod)
            if placed is not None:
                r.placements.append(placed)
                if placed.how == "preemption":
                    r.fit_preemption += 1
                    worst = max(worst, Outcome.PREEMPTION, key=lambda o: o.severity)
                else:
                    r.fit_now += 1
                continue
            # Remedies for the first failing node only: the others usually fail alike and each costs replays.
            remedies, notes = self.remedies(d) if not r.node_failures else ([], [])
            outcome = self.failure_outcome(d, remedies)
            if outcome == Outcome.NOT_CHECKED:
                r.outcome, r.message = outcome, first_line(PodReport(diagnosis=d))
                return
            if (
                r.node_failures
                and outcome == Outcome.UNSCHEDULABLE
                and r.node_failures[0].outcome == Outcome.SCALE_UP
            ):
                outcome = Outcome.SCALE_UP  # remedies were computed for the first node only
            pr = PodReport(diagnosis=d, remedies=remedies, remedy_notes=notes, owner=w.key)
            r.node_failures.append(NodeFailure(node_name, outcome, pr))
            worst = max(worst, outcome, key=lambda o: o.severity)
        if r.node_failures:
            r.failure = r.node_failures[0].report
            r.message = first_line(r.failure)
        r.outcome = worst
        if worst == Outcome.SCALE_UP and r.failure is not None:
            r.scale_up_ok, r.scale_up = scale_up_verdict(r.failure.remedies)

    def run(self, w: Workload) -> WorkloadResult:
        r = WorkloadResult(w, notes=w.notes)
        if self.opts.replace:
            gone = self.existing_pods(w)
            if gone:
                self.snapshot.remove_pods(gone)
                self.scheduler.invalidate()
                r.notes.append(f"--replace: removed {len(gone)} existing pod(s) of the workload first")
        else:
            existing = [p for p in self.existing_pods(w) if p.node_name]
            if existing and not w.per_node:
                r.notes.append(
                    f"the snapshot already runs {len(existing)} pod(s) of this workload; they stay, and the "
                    "replicas are checked in addition (--replace checks an update instead)"
                )
        self.add_owners(w)
        try:
            if w.per_node:
                self.place_daemon(w, r)
            else:
                self.place_replicas(w, r)
        except InputError as e:
            # Name the manifest's workload and file, not the replica pod the gate made up from it.
            text = str(e)
            for p in w.pods[:1] or [daemon_predicate_pod(w)]:
                meta = p.get("metadata") or {}
                text = re.sub(rf"^Pod {re.escape(str(meta.get('namespace')))}/\S+?:? ", "", text)
            raise InputError(
                f"{where(w.source, w.doc_index, w.line)}: {w.key}: pod template: {text}"
            ) from None
        return r

    # ------------------------------------------------------------ headroom

    def headroom(self, w: Workload, r: WorkloadResult, cap: int) -> Headroom:
        """cluster-capacity's question: how many more replicas fit now, on a copy of the final cluster."""
        if r.failed_replica is not None:
            return Headroom(0, False, r.message)
        snap = self.snapshot.fork()
        sub = _Gate(snap, self.profiles, self.opts, None)
        for n in range(cap):
            obj, claims = w.replica(w.replicas + n)
            if sub.admission_error(obj, w) is not None:
                return Headroom(n, False, r.message)
            sub.add_claims(copy.deepcopy(claims))
            pod = sub.admit(obj)
            d = sub.scheduler.diagnose(pod)
            if not (d.scheduled and d.chosen):
                return Headroom(n, False, first_line(PodReport(diagnosis=d)))
            snap.bind(pod, d.chosen)
            sub.assume_volumes(pod, d.chosen)
            sub.scheduler.invalidate()
        return Headroom(cap, True, f"stopped at the cap of {cap} more replicas: at least {cap} more fit")


def run_gate(
    snapshot: Snapshot,
    workloads: list[Workload],
    *,
    profiles: list[Profile] | None = None,
    options: GateOptions | None = None,
    remedy_fn: RemedyFn | None = None,
    ignored_kinds: dict[str, int] | None = None,
    snapshot_source: str = "",
) -> GateResult:
    """Place every workload in input order on `snapshot` (which is modified: pass a fork to keep it)."""
    opts = options or GateOptions()
    if opts.fail_on not in FAIL_ON:
        raise UsageError(f"invalid --fail-on {opts.fail_on!r}: choose one of {', '.join(FAIL_ON)}")
    num_pods = len(snapshot.pods)
    gate = _Gate(snapshot, profiles, opts, remedy_fn)
    results: list[WorkloadResult] = []
    for w in workloads:
        reason = ignore_reason(w, opts.config)
        if reason:
            results.append(WorkloadResult(w, Outcome.IGNORED, ignore_reason=reason, notes=w.notes))
            continue
        results.append(gate.run(w))
    apply_policy(results, opts.fail_on)
    out = GateResult(
        results,
        opts.fail_on,
        snapshot.dialect.name,
        snapshot_source,
        snapshot.num_nodes,
        num_pods,
        dict(ignored_kinds or {}),
        list(snapshot.warnings),
    )
    from kdiagnose.autoscaler.view import view_for

    view = view_for(snapshot)
    for note in (view.ca_note, view.karpenter_note):
        if note:
            # Every "fits only after scale-up" verdict depends on this evidence: CI should see it is missing.
            out.warnings.append(f"{note}: scale-up verdicts have no evidence from this autoscaler")
    if not workloads:
        # Nothing to place is a pass, but a gate fed the wrong directory should not pass silently.
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted((ignored_kinds or {}).items())) or "nothing"
        out.warnings.insert(
            0, f"no workload in the manifests (Pod, Deployment, StatefulSet, ...): read {kinds}"
        )
    if opts.headroom:
        out.headroom_cap = opts.headroom_cap
        for r in results:
            if r.outcome in (Outcome.IGNORED, Outcome.NOT_CHECKED) or r.workload.per_node:
                continue
            r.headroom = gate.headroom(r.workload, r, opts.headroom_cap)
    return out


def default_remedy_fn(pools: list[PoolSpec] | None = None) -> RemedyFn:
    """compute_remedies, with the `--pools` specs when given."""
    from functools import partial

    from kdiagnose.remedies.engine import compute_remedies

    fn: RemedyFn = partial(compute_remedies, pools=pools) if pools else compute_remedies
    return fn
