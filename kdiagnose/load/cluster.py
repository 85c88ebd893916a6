"""Live cluster reads for `kdiagnose pod/pods` and `kdiagnose check --context`: what to fetch for the
target pods (kdiagnose.load.kinds decides from their specs), fetched in parallel through
kdiagnose.load.apireader, with what could not be read recorded as warnings. The raw JSON goes straight into
the same objects the file loaders produce.

The `kubernetes` client is imported only by kdiagnose.load.kubeconfig and kdiagnose.load.apireader, lazily;
this module re-exports their public names, so `from kdiagnose.load.cluster import ...` keeps working.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kdiagnose.errors import ClusterError, UsageError
from kdiagnose.load.apireader import PAGE_LIMIT, ApiReader, ApiStatusError, describe_status
from kdiagnose.load.kinds import (
    ADMISSION_KINDS,
    AUTOSCALER_EVENT_REASONS,
    CA_STATUS_CONFIGMAP,
    DRA_KINDS,
    EVENTS_CORE,
    EVENTS_V1,
    KINDS,
    PREEMPTION_KINDS,
    SPREAD_KINDS,
    STORAGE_KINDS,
    KindSpec,
    needs_default_spreading,
    needs_dra,
    needs_preemption,
    needs_storage,
    pod_spec,
    uses_namespace_selector,
)
from kdiagnose.load.kubeconfig import ClusterTarget, kubeconfig_paths, resolve_target
from kdiagnose.load.raw import RawObject
from kdiagnose.load.rbac import subject_from_denial
from kdiagnose.load.trim import trim_node, trim_pod
from kdiagnose.versions import Dialect, VersionError, dialect_for, dialect_for_server

__all__ = [
    "KINDS",
    "PAGE_LIMIT",
    "POD_PHASE_SELECTOR",
    "ApiReader",
    "ApiStatusError",
    "ClusterTarget",
    "Fetched",
    "KindSpec",
    "choose_dialect",
    "fetch_cluster",
    "fetch_for_pod",
    "fetch_for_pods",
    "kubeconfig_paths",
    "needs_default_spreading",
    "needs_dra",
    "needs_preemption",
    "needs_storage",
    "no_gc",
    "read_scheduler_configmap",
    "resolve_target",
    "uses_namespace_selector",
]

Obj = dict[str, Any]

# The scheduler's informer drops terminal pods (pkg/scheduler/eventhandlers.go); so does the server here.
POD_PHASE_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"
_WORKERS = 8


# --- version ---


def choose_dialect(server_version: str, override: str | None) -> tuple[Dialect, list[str]]:
    """The dialect of --k8s-version, else of the server's /version exactly (versions.dialect_for_server)."""
    if override:
        try:
            return dialect_for(override), []
        except VersionError as e:
            raise UsageError(f"--k8s-version: {e}") from None
    try:
        return dialect_for_server(server_version)
    except VersionError as e:
        raise UsageError(str(e)) from None


# --- fetching ---


@dataclass(slots=True)
class Fetched:
    """What one live read produced: the objects for build_snapshot, and what could not be read."""

    target: ClusterTarget
    server_version: str = ""
    objects: list[Obj] = field(default_factory=list)  # every object for the snapshot (Events included)
    # The bound pods of the Pod list decoded as compact records (load/live_pods.py), for the snapshot too.
    records: list[RawObject] = field(default_factory=list)
    listed_kinds: set[str] = field(default_factory=set)
    missing: dict[str, str] = field(default_factory=dict)  # kind -> "forbidden" | "not served" | ...
    warnings: list[str] = field(default_factory=list)
    targets: list[Obj] = field(default_factory=list)  # the pods to diagnose, as fetched
    events: list[Obj] = field(default_factory=list)  # the target pods' scheduling events
    events_readable: bool = True
    # The replay's required lists that RBAC denied ("nodes" | "pods" -> describe_status): the report then
    # falls back to what the pod, its events and its conditions say (a namespace-scoped user).
    denied: dict[str, str] = field(default_factory=dict)
    denied_subject: tuple[str, str, str] | None = None  # whom the 403 named (kdiagnose.load.rbac.Subject)
    # What the autoscaler reads could not get ("cluster-autoscaler status" | "NodePool" | "NodeClaim" -> why).
    unreadable: dict[str, str] = field(default_factory=dict)
    # `pods` in one namespace with nothing Pending there: Pending pods in the other namespaces, by namespace.
    pending_elsewhere: dict[str, int] = field(default_factory=dict)
    fetched_at: float = 0.0
    elapsed: float = 0.0
    requests: int = 0

    @property
    def source(self) -> str:
        return f"context {self.target.context}"

    def raw_objects(self) -> Iterator[RawObject]:
        """Everything fetched, as build_snapshot reads it."""
        source = self.source
        for o in self.objects:
            yield RawObject(o, source)
        yield from self.records

    def count(self) -> int:
        return len(self.objects) + len(self.records)


def _missing_line(spec: KindSpec, reason: str) -> str:
    checks = f"; not verified: {spec.checks}" if spec.checks else ""
    return f"cannot list {spec.plural}: {reason}{checks}"


class _Fetcher:
    def __init__(self, reader: ApiReader, full: bool, compact: bool = True) -> None:
        self.reader = reader
        self.full = full
        # The Pod list's bound pods as compact records (load/live_pods.py); not when the objects themselves
        # are wanted (--full, --save-snapshot: records cannot be written back as objects).
        self.compact = compact and not full
        self.page_pool: Any = None
        if self.compact:
            from kdiagnose.load.live_pods import start_pool

            # Its processes are forked here, before the first list thread exists (live_pods.PagePool).
            self.page_pool = start_pool()
        self.pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="kdiagnose-list")
        self.out = Fetched(reader.target, fetched_at=time.time())
        # Each kind's items; the Pod list's are RawObjects when `compact` (load/live_pods.py).
        self.lists: dict[str, Future[list[Any]]] = {}

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        if self.page_pool is not None:
            self.page_pool.close()

    def _transform(self, kind: str) -> Callable[[Obj], Obj] | None:
        if self.full:
            return None
        return {"Pod": trim_pod, "Node": trim_node}.get(kind)

    def start_list(
        self, kind: str, namespaces: Iterable[str | None] = (None,), *, field_selector: str = ""
    ) -> None:
        if kind in self.lists:
            return
        spec = KINDS[kind]
        nss = list(namespaces) if spec.namespaced else [None]
        transform = self._transform(kind)

        def run() -> list[Any]:
            out: list[Any] = []
            for ns in nss:
                if kind == "Pod" and self.compact and transform is not None:
                    from kdiagnose.load.live_pods import list_pods

                    out.extend(
                        list_pods(
                            self.reader,
                            spec,
                            ns,
                            field_selector=field_selector,
                            transform=transform,
                            pool=self.page_pool,
                        )
                    )
                    continue
                out.extend(self.reader.list(spec, ns, transform=transform, field_selector=field_selector))
            return out

        self.lists[kind] = self.pool.submit(run)

    def result(self, kind: str, required: bool = False) -> list[Obj] | None:
        spec = KINDS[kind]
        try:
            items = self.lists[kind].result()
        except ApiStatusError as e:
            reason = describe_status(e)
            if required or e.status == 401:
                raise ClusterError(f"cannot list {spec.plural}: {reason}") from None
            self.out.missing[kind] = reason
            self.out.warnings.append(_missing_line(spec, reason))
            return None
        self.out.listed_kinds.add(kind)
        return items

    def events(self, namespace: str | None, field_selector: str) -> list[Obj]:
        """events.k8s.io/v1 first (regarding.*), then core/v1 (involvedObject.*) when that API is not readable."""
        try:
            return self.reader.list(EVENTS_V1, namespace, field_selector=field_selector)
        except ApiStatusError as e:
            if e.status not in (400, 403, 404):
                raise
        core_selector = field_selector.replace("regarding.", "involvedObject.")
        return self.reader.list(EVENTS_CORE, namespace, field_selector=core_selector)


def _start_autoscaler(fx: _Fetcher) -> list[Future[Any]]:
    """The autoscalers' state, read-only: cluster-autoscaler's status ConfigMap (one GET), Karpenter's
    NodePools and NodeClaims (LISTs)."""
    ns, name = CA_STATUS_CONFIGMAP
    return [
        fx.pool.submit(fx.reader.get, KINDS["ConfigMap"], name, ns),
        fx.pool.submit(fx.reader.list, KINDS["NodePool"]),
        fx.pool.submit(fx.reader.list, KINDS["NodeClaim"]),
        # The failed scale-ups CA's LogRecorder writes on its status ConfigMap (ScaleUpFailed, ...).
        fx.pool.submit(fx.events, ns, f"regarding.kind=ConfigMap,regarding.name={name}"),
    ]


def _finish_autoscaler(fx: _Fetcher, futures: list[Future[Any]]) -> None:
    """A missing status ConfigMap or Karpenter API means no such autoscaler; a denied read is recorded, so
    reports say "not checked: cluster-autoscaler status (forbidden)" instead of advising blind."""
    whats = ("cluster-autoscaler status", "NodePool", "NodeClaim", "cluster-autoscaler events")
    for fut, what in zip(futures, whats, strict=True):
        try:
            got = fut.result()
        except ApiStatusError as e:
            if what == "cluster-autoscaler events":
                continue  # context for a backoff, not required
            if e.status == 401:
                raise ClusterError(f"cannot read {what}: {describe_status(e)}") from None
            if e.status == 404:
                continue
            fx.out.unreadable[what] = describe_status(e)
            fx.out.warnings.append(
                f"not checked: {what} ({describe_status(e)}): scale-up advice is given blind"
            )
            continue
        if isinstance(got, dict):
            fx.out.objects.append(got)
        else:
            fx.out.objects.extend(got)


def _connect(reader: ApiReader, k8s_version: str | None) -> tuple[str, Dialect, list[str]]:
    """GET /version: the first request, so an unreachable server fails fast with one line."""
    try:
        doc = reader.get_json("/version")
        server_version = str(doc.get("gitVersion") or "")
    except ApiStatusError as e:
        if e.status == 401:
            raise ClusterError(
                f"the API server {reader.target.server} rejected the credentials of context {reader.target.context} (401 Unauthorized)"
            ) from None
        # /version is readable by everyone on a real cluster, but not required: say that the release was
        # not read, and what is replayed instead.
        dialect, warnings = choose_dialect("", k8s_version)
        if not k8s_version:
            warnings = [
                f"GET /version failed ({describe_status(e)}): the server's release is unknown; replaying as "
                f"{dialect.name} (use --k8s-version)"
            ]
        return "", dialect, warnings
    dialect, warnings = choose_dialect(server_version, k8s_version)
    return server_version, dialect, warnings


def _plan(fx: _Fetcher, targets: list[Obj], namespaces: list[str | None], dialect: Dialect) -> None:
    """Start every list the targets' replay needs, in parallel."""
    fx.start_list("Node")
    fx.start_list("Pod", field_selector=POD_PHASE_SELECTOR)
    pending = [p for p in targets if not pod_spec(p).get("nodeName")]
    if any(needs_storage(p) for p in pending):
        for k in STORAGE_KINDS:
            fx.start_list(k)
    if any(needs_preemption(p) for p in pending):
        fx.start_list("PriorityClass")
        fx.start_list("PodDisruptionBudget")
    if any(needs_default_spreading(p) for p in pending):
        for k in SPREAD_KINDS:
            fx.start_list(k, namespaces)
    if any(uses_namespace_selector(p) for p in pending):
        fx.start_list("Namespace")
    if dialect.dra_enabled and any(needs_dra(p) for p in pending):
        fx.start_list("ResourceClaim")
        fx.start_list("ResourceSlice")
        fx.start_list("DeviceClass")
        fx.start_list("ResourceClaimTemplate", namespaces)
        if dialect.dra_device_taint_rules:
            # v1.37 applies DeviceTaintRules (DRADeviceTaintRules GA); a denied or unserved list leaves the
            # kind out of the snapshot, so DynamicResources notes "not checked: missing DeviceTaintRules".
            fx.start_list("DeviceTaintRule")


def _required(fx: _Fetcher, fallback: bool) -> tuple[list[Obj], list[Any]] | None:
    """The Node and Pod lists, or None when RBAC denies either and `fallback` allows reading on without
    them (both are read to name every missing permission). Any other failure is fatal."""
    got: dict[str, list[Any]] = {}
    for kind in ("Node", "Pod"):
        spec = KINDS[kind]
        try:
            got[kind] = fx.lists[kind].result()
        except ApiStatusError as e:
            if not fallback or e.status != 403:
                raise ClusterError(f"cannot list {spec.plural}: {describe_status(e)}") from None
            fx.out.denied[spec.plural] = describe_status(e)
            if fx.out.denied_subject is None:
                fx.out.denied_subject = subject_from_denial(e.message)
    if fx.out.denied:
        return None
    fx.out.listed_kinds.update(("Node", "Pod"))
    return got["Node"], got["Pod"]


def _pods_need_namespaces(pods: list[Any]) -> bool:
    """Some pod's own namespaceSelector term (anti-affinity, preferred terms): the replay reads Namespaces.
    A compact record's spec is its Template's, read once per Template."""
    from kdiagnose.load.compact import BoundPod

    seen: set[int] = set()
    for p in pods:
        if isinstance(p, RawObject):
            rec = p.compact
            if isinstance(rec, BoundPod):
                if id(rec.template) in seen:
                    continue
                seen.add(id(rec.template))
                if uses_namespace_selector({"spec": rec.template.spec()}):
                    return True
                continue
            p = p.obj
        if uses_namespace_selector(p):
            return True
    return False


def _collect(fx: _Fetcher, targets: list[Obj], *, fallback: bool = False) -> bool:
    """The lists into fx.out.objects (and the Pod list's compact records into fx.out.records); False
    (nothing collected) when the replay is denied (`_required`)."""
    out = fx.out
    required = _required(fx, fallback)
    if required is None:
        return False
    nodes, pods = required
    if "Namespace" not in fx.lists and _pods_need_namespaces(pods):
        fx.start_list("Namespace")
    # The targets as fetched are fresher than the list; a terminal target is not in the list at all.
    by_key = {_key(p) for p in targets}
    transform = fx._transform("Pod")
    merged: list[Obj] = []
    for p in pods:
        if isinstance(p, RawObject):
            rec = p.compact
            if rec is not None:
                if rec.key not in by_key:
                    out.records.append(p)
                continue
            p = p.obj
        if _key(p) not in by_key:
            merged.append(p)
    merged.extend(transform(p) if transform else p for p in targets)
    out.objects.extend(nodes)
    out.objects.extend(merged)
    for kind in fx.lists:
        if kind in ("Node", "Pod"):
            continue
        items = fx.result(kind)
        if items is not None:
            out.objects.extend(items)
    return True


@contextmanager
def no_gc() -> Iterator[None]:
    """Parsing 150,000 pods allocates millions of acyclic dicts; the cyclic GC would rescan the growing
    heap again and again (doubling the time). Nothing here creates cycles; what was built is then frozen
    out of the collector's way (as load.dump.load_snapshot does)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.freeze()
            gc.enable()


def _key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _scheduling_events(fx: _Fetcher, namespace: str | None) -> list[Obj]:
    """FailedScheduling (scheduler, Karpenter) and the autoscalers' pod events: one field-selected list per
    reason (a field selector cannot OR values)."""
    out = fx.events(namespace, "reason=FailedScheduling")
    for reason in AUTOSCALER_EVENT_REASONS:
        try:
            out.extend(fx.events(namespace, f"reason={reason}"))
        except ApiStatusError:
            continue  # the scheduler's events were readable: these add context, they are not required
    return out


def _finish_events(fx: _Fetcher, fut: Future[list[Obj]], targets: list[Obj]) -> None:
    try:
        events = fut.result()
    except ApiStatusError as e:
        fx.out.events_readable = False
        fx.out.warnings.append(_missing_line(EVENTS_CORE, describe_status(e)))
        return
    uids = {str((p.get("metadata") or {}).get("uid") or "") for p in targets}
    keys = {_key(p) for p in targets}
    kept = []
    for ev in events:
        reg = ev.get("regarding") or ev.get("involvedObject") or {}
        if not isinstance(reg, dict) or reg.get("kind", "Pod") != "Pod":
            continue
        if f"{reg.get('namespace') or 'default'}/{reg.get('name')}" not in keys:
            continue
        # Same name, other uid: an event of a deleted predecessor of the pod.
        if reg.get("uid") and uids - {""} and reg.get("uid") not in uids:
            continue
        kept.append(ev)
    fx.out.events = kept
    fx.out.objects.extend(kept)


@no_gc()
def fetch_for_pod(
    target: ClusterTarget,
    name: str,
    namespace: str,
    *,
    timeout: float = 30.0,
    k8s_version: str | None = None,
    full: bool = False,
    chunk_size: int = PAGE_LIMIT,
    compact: bool = True,
) -> tuple[Fetched, Dialect]:
    """Everything `kdiagnose pod NAME` needs, in two rounds: /version + the pod, then the lists in parallel."""
    reader = ApiReader(target, timeout, chunk_size)
    fx = _Fetcher(reader, full, compact)
    start = time.monotonic()
    try:
        version_f = fx.pool.submit(_connect, reader, k8s_version)
        pod_f = fx.pool.submit(reader.get, KINDS["Pod"], name, namespace)
        server_version, dialect, warnings = version_f.result()
        try:
            pod = pod_f.result()
        except ApiStatusError as e:
            if e.status == 404:
                raise ClusterError(f'pod "{namespace}/{name}" not found (context {target.context})') from None
            raise ClusterError(f'cannot get pod "{namespace}/{name}": {describe_status(e)}') from None
        out = fx.out
        out.server_version = server_version
        out.warnings.extend(warnings)
        out.targets = [pod]
        selector = f"regarding.kind=Pod,regarding.name={name},regarding.namespace={namespace}"
        events_f = fx.pool.submit(fx.events, namespace, selector)
        if not pod_spec(pod).get("nodeName") and (pod.get("status") or {}).get("phase") not in (
            "Succeeded",
            "Failed",
        ):
            scaling = _start_autoscaler(fx)
            _plan(fx, [pod], [namespace], dialect)
            if _collect(fx, [pod], fallback=True):
                _finish_autoscaler(fx, scaling)
            else:
                out.objects.append(pod if full else trim_pod(pod))
        else:
            # Bound or finished: not a scheduling question; the pod alone is enough to say so.
            out.objects.append(pod if full else trim_pod(pod))
        _finish_events(fx, events_f, [pod])
        out.elapsed = time.monotonic() - start
        out.requests = reader.requests
        return out, dialect
    finally:
        fx.close()
        reader.close()


@no_gc()
def fetch_cluster(
    target: ClusterTarget,
    *,
    timeout: float = 30.0,
    k8s_version: str | None = None,
    chunk_size: int = PAGE_LIMIT,
) -> tuple[Fetched, Dialect]:
    """The whole cluster as the scheduler sees it (every kind the replay may read), for `kdiagnose check
    --context`: the manifests' needs are unknown until they are expanded, so nothing is skipped."""
    reader = ApiReader(target, timeout, chunk_size)
    fx = _Fetcher(reader, False)
    start = time.monotonic()
    try:
        server_version, dialect, warnings = _connect(reader, k8s_version)
        fx.out.server_version = server_version
        fx.out.warnings.extend(warnings)
        fx.start_list("Node")
        fx.start_list("Pod", field_selector=POD_PHASE_SELECTOR)
        for kind in (*STORAGE_KINDS, *PREEMPTION_KINDS, *SPREAD_KINDS, *ADMISSION_KINDS, "Namespace"):
            fx.start_list(kind)
        if dialect.dra_enabled:
            for kind in DRA_KINDS:
                fx.start_list(kind)
            if dialect.dra_device_taint_rules:
                fx.start_list("DeviceTaintRule")
        scaling = _start_autoscaler(fx)
        _collect(fx, [])
        _finish_autoscaler(fx, scaling)
        fx.out.elapsed = time.monotonic() - start
        fx.out.requests = reader.requests
        return fx.out, dialect
    finally:
        fx.close()
        reader.close()


def read_scheduler_configmap(target: ClusterTarget, ref: str, *, timeout: float = 30.0) -> tuple[str, str]:
    """The KubeSchedulerConfiguration text stored in a ConfigMap (`configmap/NS/NAME` or `NS/NAME`).

    Picks the data key holding `kind: KubeSchedulerConfiguration` (clusters name it config.yaml,
    kube-scheduler-config.yaml, ...). Returns (text, "configmap/NS/NAME[key]")."""
    parts = ref.split("/")
    if parts and parts[0] in ("configmap", "configmaps", "cm"):
        parts = parts[1:]
    if len(parts) != 2 or not all(parts):
        raise UsageError(f"invalid --scheduler-config-from {ref!r}: expected configmap/NAMESPACE/NAME")
    ns, name = parts
    reader = ApiReader(target, timeout)
    try:
        try:
            cm = reader.get_json(f"/api/v1/namespaces/{ns}/configmaps/{name}")
        except ApiStatusError as e:
            raise ClusterError(f'cannot get configmap "{ns}/{name}": {describe_status(e)}') from None
    finally:
        reader.close()
    raw_data = cm.get("data")
    data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
    candidates = [
        (k, v) for k, v in sorted(data.items()) if isinstance(v, str) and "KubeSchedulerConfiguration" in v
    ]
    if not candidates:
        raise ClusterError(f'configmap "{ns}/{name}" has no KubeSchedulerConfiguration in its data')
    key, text = candidates[0]
    return text, f"configmap/{ns}/{name}[{key}]"


@no_gc()
def fetch_for_pods(
    target: ClusterTarget,
    namespace: str | None,
    *,
    selector: str = "",
    timeout: float = 30.0,
    k8s_version: str | None = None,
    full: bool = False,
    chunk_size: int = PAGE_LIMIT,
    compact: bool = True,
) -> tuple[Fetched, Dialect]:
    """Everything `kdiagnose pods` needs: the Pending pods in scope (namespace None = all), then the lists."""
    reader = ApiReader(target, timeout, chunk_size)
    fx = _Fetcher(reader, full, compact)
    start = time.monotonic()
    try:
        version_f = fx.pool.submit(_connect, reader, k8s_version)
        targets_f = fx.pool.submit(
            reader.list,
            KINDS["Pod"],
            namespace,
            label_selector=selector,
            field_selector="status.phase=Pending",
        )
        server_version, dialect, warnings = version_f.result()
        try:
            targets = targets_f.result()
        except ApiStatusError as e:
            raise ClusterError(f"cannot list pods: {describe_status(e)}") from None
        out = fx.out
        out.server_version = server_version
        out.warnings.extend(warnings)
        out.targets = targets
        events_f = fx.pool.submit(_scheduling_events, fx, namespace)
        namespaces: list[str | None] = [namespace] if namespace else [None]
        elsewhere_f = None
        if not targets and namespace is not None:
            elsewhere_f = fx.pool.submit(_pending_elsewhere, reader, namespace, selector)
        if targets:
            scaling = _start_autoscaler(fx)
            _plan(fx, targets, namespaces, dialect)
            if _collect(fx, targets, fallback=True):
                _finish_autoscaler(fx, scaling)
            else:
                transform = fx._transform("Pod")
                out.objects.extend(transform(p) if transform else p for p in targets)
        _finish_events(fx, events_f, targets)
        if elsewhere_f is not None:
            out.pending_elsewhere = elsewhere_f.result()
        out.elapsed = time.monotonic() - start
        out.requests = reader.requests
        return out, dialect
    finally:
        fx.close()
        reader.close()


def _namespace_only(obj: Obj) -> Obj:
    return {"metadata": {"namespace": (obj.get("metadata") or {}).get("namespace")}}


def _pending_elsewhere(reader: ApiReader, namespace: str, selector: str) -> dict[str, int]:
    """Pending pods (of the same -l selector) in the namespaces other than `namespace`, counted per
    namespace: the hint to use -A. A user who may not list pods cluster-wide gets no hint (and no error)."""
    try:
        pods = reader.list(
            KINDS["Pod"],
            None,
            label_selector=selector,
            field_selector="status.phase=Pending",
            transform=_namespace_only,
        )
    except ApiStatusError:
        return {}
    counts: dict[str, int] = {}
    for p in pods:
        ns = str(p["metadata"]["namespace"] or "default")
        if ns != namespace:
            counts[ns] = counts.get(ns, 0) + 1
    return dict(sorted(counts.items()))
