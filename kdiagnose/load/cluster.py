"""Live cluster reads for `kdiagnose pod/pods`: kubeconfig as kubectl resolves it, then parallel, paginated
GET/LIST requests whose raw JSON goes straight into the same objects the file loaders produce.

This is the only module that imports `kubernetes` (lazily, so the CLI starts fast). The official client
does config, TLS, tokens and exec credential plugins; responses are read as bytes and parsed with orjson,
never deserialized into the client's generated models (slow, and they drop fields the client does not
know). Only GET is ever sent.
"""

from __future__ import annotations

import gc
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kdiagnose.errors import ClusterError, UsageError
from kdiagnose.load.trim import trim_node, trim_pod
from kdiagnose.versions import Dialect, VersionError, dialect_for

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
    "fetch_for_pod",
    "fetch_for_pods",
    "kubeconfig_paths",
    "no_gc",
    "resolve_target",
]

Obj = dict[str, Any]

PAGE_LIMIT = 500
# The scheduler's informer drops terminal pods (pkg/scheduler/eventhandlers.go); so does the server here.
POD_PHASE_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"
_WORKERS = 8
_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(frozen=True, slots=True)
class KindSpec:
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
    )
}
_EVENTS_V1 = KindSpec("Event", "events.k8s.io/v1", "events", True)
_EVENTS_CORE = KindSpec("Event", "v1", "events", True, "the recorded-vs-replayed comparison")

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
_STORAGE_KINDS = (
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
)
_PREEMPTION_KINDS = ("PriorityClass", "PodDisruptionBudget")
_SPREAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
_DRA_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass")


class ApiStatusError(Exception):
    """A non-2xx answer, with the Status object's reason and message."""

    def __init__(self, status: int, reason: str, message: str, path: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.path = path


# --- config resolution ---


@dataclass(slots=True)
class ClusterTarget:
    context: str
    namespace: str
    server: str
    configuration: Any  # kubernetes.client.Configuration
    source: str = ""  # the kubeconfig file(s), or "in-cluster"


def kubeconfig_paths(flag: str | None, env: dict[str, str] | None = None) -> list[str]:
    """The files kubectl would read: --kubeconfig alone, else $KUBECONFIG's existing files, else ~/.kube/config."""
    environ: Any = os.environ if env is None else env
    if flag:
        path = os.path.expanduser(flag)
        if not os.path.exists(path):
            raise ClusterError(f"--kubeconfig {flag}: no such file")
        return [path]
    listed = str(environ.get("KUBECONFIG", ""))
    if listed:
        return [
            os.path.expanduser(p)
            for p in listed.split(os.pathsep)
            if p and os.path.exists(os.path.expanduser(p))
        ]
    default = os.path.expanduser("~/.kube/config")
    return [default] if os.path.exists(default) else []


def _merged_config(paths: list[str]) -> Any:
    """Merge like kubectl: the first file that defines a cluster/user/context name wins, and the
    first file that sets current-context wins (the client's merger lets the last one win)."""
    import yaml
    from kubernetes.config import kube_config

    merger_cls: Any = kube_config.KubeConfigMerger
    merger = merger_cls(kube_config.ENV_KUBECONFIG_PATH_SEPARATOR.join(paths))
    if merger.config is None:
        raise ClusterError(f"kubeconfig {', '.join(paths)}: no configuration found")
    current = ""
    for p in paths:
        with open(p, encoding="utf-8") as f:
            doc = yaml.safe_load(f) or {}
        if isinstance(doc, dict) and doc.get("current-context"):
            current = str(doc["current-context"])
            break
    merger.config.value["current-context"] = current
    return merger.config


def resolve_target(kubeconfig: str | None = None, context: str | None = None) -> ClusterTarget:
    """Build a client Configuration the way kubectl picks one, naming the context and default namespace."""
    from kubernetes.client import Configuration
    from kubernetes.config.config_exception import ConfigException

    paths = kubeconfig_paths(kubeconfig)
    cfg = Configuration()
    if not paths:
        if os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT"):
            from kubernetes.config import incluster_config

            load_incluster: Any = incluster_config.load_incluster_config
            try:
                load_incluster(client_configuration=cfg)
            except ConfigException as e:
                raise ClusterError(f"in-cluster config: {e}") from None
            ns_file = _SA_DIR / "namespace"
            ns = ns_file.read_text().strip() if ns_file.exists() else "default"
            return ClusterTarget("in-cluster", ns or "default", str(cfg.host), cfg, "in-cluster")
        where = "KUBECONFIG lists no existing file" if os.environ.get("KUBECONFIG") else "no ~/.kube/config"
        raise ClusterError(f"no kubeconfig: {where}, and not running inside a cluster (use --kubeconfig)")
    from kubernetes.config import kube_config

    loader_cls: Any = kube_config.KubeConfigLoader
    try:
        merged = _merged_config(paths)
        if not context and not merged.value.get("current-context"):
            raise ClusterError(f"kubeconfig {':'.join(paths)}: no current-context set (use --context)")
        loader = loader_cls(config_dict=merged, active_context=context, config_base_path=None)
        loader.load_and_set(cfg)
        ctx = loader.current_context
    except ConfigException as e:
        raise ClusterError(f"kubeconfig {':'.join(paths)}: {e}") from None
    except (OSError, ValueError) as e:  # unreadable file, bad YAML, missing cert file
        raise ClusterError(f"kubeconfig {':'.join(paths)}: {e}") from None
    name = str(ctx.get("name") or context or "")
    ns = str((ctx.get("context") or {}).get("namespace") or "default")
    return ClusterTarget(name, ns, str(cfg.host), cfg, ":".join(paths))


# --- reading ---


class ApiReader:
    """GET-only access to one API server; thread-safe (urllib3's pool is)."""

    def __init__(self, target: ClusterTarget, timeout: float = 30.0) -> None:
        import urllib3
        from kubernetes.client import ApiClient

        # urllib3 logs every retry as a WARNING, which Python's last-resort handler prints to stderr:
        # errors are reported once, as one line, by the caller.
        logging.getLogger("urllib3").setLevel(logging.ERROR)
        cfg = target.configuration
        # Connection failures retry twice; a read timeout does not retry (it would multiply --request-timeout).
        cfg.retries = urllib3.Retry(total=2, connect=2, read=0, status=0, other=0, redirect=3)
        self.target = target
        self.timeout = timeout
        self.api: Any = ApiClient(cfg)
        self.api.user_agent = "kdiagnose"
        self.requests = 0

    def close(self) -> None:
        self.api.close()

    def _raw(self, path: str, query: list[tuple[str, str]]) -> bytes:
        import urllib3

        method, url, headers, _, _ = self.api.param_serialize(
            "GET",
            path,
            query_params=query or None,
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        self.requests += 1
        try:
            resp: Any = self.api.call_api(method, url, header_params=headers, _request_timeout=self.timeout)
            data: bytes = resp.read()
        except urllib3.exceptions.HTTPError as e:
            raise ClusterError(self._describe_transport_error(e, path)) from None
        except OSError as e:
            raise ClusterError(
                f"cannot reach the API server {self.target.server} (context {self.target.context}): {e}"
            ) from None
        if not 200 <= resp.status < 300:
            raise self._status_error(resp.status, data, path)
        return data

    def _describe_transport_error(self, e: Exception, path: str) -> str:
        import urllib3

        reason = getattr(e, "reason", None) or e
        where = f"the API server {self.target.server} (context {self.target.context})"
        # NewConnectionError subclasses ConnectTimeoutError: test it first.
        if isinstance(reason, urllib3.exceptions.NewConnectionError | ConnectionRefusedError):
            cause = str(reason).rsplit("] ", 1)[-1].rstrip("')\"") if "]" in str(reason) else str(reason)
            return f"cannot reach {where}: {cause.lower()}"
        if isinstance(reason, urllib3.exceptions.TimeoutError | TimeoutError):
            return f"{where} did not answer GET {path} within {self.timeout:g}s (--request-timeout)"
        text = str(reason)
        if "refused" in text.lower():
            return f"cannot reach {where}: connection refused"
        if isinstance(reason, urllib3.exceptions.SSLError):
            return f"cannot reach {where}: TLS error: {text}"
        # urllib3 wraps the socket error in a long repr; keep its last clause.
        return f"cannot reach {where}: {text.rsplit(': ', 1)[-1].rstrip(')')}"

    @staticmethod
    def _status_error(status: int, data: bytes, path: str) -> ApiStatusError:
        import orjson

        reason, message = "", ""
        try:
            doc = orjson.loads(data)
            if isinstance(doc, dict):
                reason = str(doc.get("reason") or "")
                message = str(doc.get("message") or "")
        except orjson.JSONDecodeError:
            message = data[:200].decode("utf-8", "replace").strip()
        return ApiStatusError(
            status,
            reason or {401: "Unauthorized", 403: "Forbidden", 404: "NotFound"}.get(status, ""),
            message,
            path,
        )

    def get_json(self, path: str, query: list[tuple[str, str]] | None = None) -> Obj:
        import orjson

        doc = orjson.loads(self._raw(path, query or []))
        if not isinstance(doc, dict):
            raise ClusterError(
                f"GET {path}: the API server answered with a {type(doc).__name__}, not an object"
            )
        return doc

    def get(self, spec: KindSpec, name: str, namespace: str | None = None) -> Obj:
        obj = self.get_json(spec.path(namespace, name))
        obj.setdefault("kind", spec.kind)
        obj.setdefault("apiVersion", spec.group_version)
        return obj

    def list(
        self,
        spec: KindSpec,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        transform: Callable[[Obj], Obj] | None = None,
        limit: int = PAGE_LIMIT,
    ) -> list[Obj]:
        """Every item of a paginated list (limit + continue); a 410 Expired continue restarts it once."""
        import orjson

        path = spec.path(namespace)
        restarted = False
        while True:
            items: list[Obj] = []
            token = ""
            try:
                while True:
                    query = [("limit", str(limit))]
                    if label_selector:
                        query.append(("labelSelector", label_selector))
                    if field_selector:
                        query.append(("fieldSelector", field_selector))
                    if token:
                        query.append(("continue", token))
                    doc = orjson.loads(self._raw(path, query))
                    for it in doc.get("items") or ():
                        # List items carry no kind/apiVersion on the wire.
                        obj = {"apiVersion": spec.group_version, "kind": spec.kind, **it}
                        items.append(transform(obj) if transform else obj)
                    token = str((doc.get("metadata") or {}).get("continue") or "")
                    if not token:
                        return items
            except ApiStatusError as e:
                if e.status == 410 and not restarted:
                    restarted = True  # the snapshot behind the continue token was compacted
                    continue
                raise


# --- version ---


def choose_dialect(server_version: str, override: str | None) -> tuple[Dialect, list[str]]:
    """The dialect of --k8s-version, else of the server's /version; an unknown minor uses the nearest known."""
    if override:
        try:
            return dialect_for(override), []
        except VersionError as e:
            raise UsageError(f"--k8s-version: {e}") from None
    try:
        return dialect_for(server_version), []
    except VersionError:
        pass
    import re

    m = re.match(r"^v?1\.(\d+)", server_version or "")
    if not m:
        d = dialect_for(None)
        return d, [
            f"server version {server_version!r} not understood: replaying as {d.name} (use --k8s-version)"
        ]
    minor = int(m.group(1))
    known = [31, 32, 33, 34, 35]
    nearest = min(known, key=lambda k: (abs(k - minor), -k))
    d = dialect_for(f"v1.{nearest}")
    return d, [
        f"server {server_version} is not a version kdiagnose knows: replaying as {d.name} (use --k8s-version)"
    ]


# --- fetching ---


@dataclass(slots=True)
class Fetched:
    """What one live read produced: the objects for build_snapshot, and what could not be read."""

    target: ClusterTarget
    server_version: str = ""
    objects: list[Obj] = field(default_factory=list)  # every object for the snapshot (Events included)
    listed_kinds: set[str] = field(default_factory=set)
    missing: dict[str, str] = field(default_factory=dict)  # kind -> "forbidden" | "not served" | ...
    warnings: list[str] = field(default_factory=list)
    targets: list[Obj] = field(default_factory=list)  # the pods to diagnose, as fetched
    events: list[Obj] = field(default_factory=list)  # the target pods' scheduling events
    events_readable: bool = True
    fetched_at: float = 0.0
    elapsed: float = 0.0
    requests: int = 0


def _pod_spec(pod: Obj) -> Obj:
    spec = pod.get("spec")
    return spec if isinstance(spec, dict) else {}


def needs_storage(pod: Obj) -> bool:
    return any(
        isinstance(v, dict) and not _STORAGE_VOLUME_SOURCES.isdisjoint(v)
        for v in _pod_spec(pod).get("volumes") or ()
    )


def needs_preemption(pod: Obj) -> bool:
    return _pod_spec(pod).get("preemptionPolicy") != "Never"


def needs_default_spreading(pod: Obj) -> bool:
    return not _pod_spec(pod).get("topologySpreadConstraints")


def needs_dra(pod: Obj) -> bool:
    return bool(_pod_spec(pod).get("resourceClaims"))


def uses_namespace_selector(pod: Obj) -> bool:
    affinity = _pod_spec(pod).get("affinity")
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


def _missing_line(spec: KindSpec, reason: str) -> str:
    checks = f"; not verified: {spec.checks}" if spec.checks else ""
    return f"cannot list {spec.plural}: {reason}{checks}"


class _Fetcher:
    def __init__(self, reader: ApiReader, full: bool) -> None:
        self.reader = reader
        self.full = full
        self.pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="kdiagnose-list")
        self.out = Fetched(reader.target, fetched_at=time.time())
        self.lists: dict[str, Future[list[Obj]]] = {}

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)

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

        def run() -> list[Obj]:
            out: list[Obj] = []
            for ns in nss:
                out.extend(self.reader.list(spec, ns, transform=transform, field_selector=field_selector))
            return out

        self.lists[kind] = self.pool.submit(run)

    def result(self, kind: str, required: bool = False) -> list[Obj] | None:
        spec = KINDS[kind]
        try:
            items = self.lists[kind].result()
        except ApiStatusError as e:
            reason = _describe_status(e)
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
            return self.reader.list(_EVENTS_V1, namespace, field_selector=field_selector)
        except ApiStatusError as e:
            if e.status not in (400, 403, 404):
                raise
        core_selector = field_selector.replace("regarding.", "involvedObject.")
        return self.reader.list(_EVENTS_CORE, namespace, field_selector=core_selector)


def _describe_status(e: ApiStatusError) -> str:
    if e.status == 403:
        return "forbidden"
    if e.status == 401:
        return "unauthorized (the context's credentials were rejected)"
    if e.status == 404:
        return "not served by this API server"
    return f"{e.status} {e.reason or 'error'}" + (f": {e.message}" if e.message else "")


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
        server_version = ""  # /version is readable by everyone on a real cluster, but not required
    dialect, warnings = choose_dialect(server_version, k8s_version)
    return server_version, dialect, warnings


def _plan(fx: _Fetcher, targets: list[Obj], namespaces: list[str | None], dialect: Dialect) -> None:
    """Start every list the targets' replay needs, in parallel."""
    fx.start_list("Node")
    fx.start_list("Pod", field_selector=POD_PHASE_SELECTOR)
    pending = [p for p in targets if not _pod_spec(p).get("nodeName")]
    if any(needs_storage(p) for p in pending):
        for k in _STORAGE_KINDS:
            fx.start_list(k)
    if any(needs_preemption(p) for p in pending):
        fx.start_list("PriorityClass")
        fx.start_list("PodDisruptionBudget")
    if any(needs_default_spreading(p) for p in pending):
        for k in _SPREAD_KINDS:
            fx.start_list(k, namespaces)
    if any(uses_namespace_selector(p) for p in pending):
        fx.start_list("Namespace")
    if dialect.dra_enabled and any(needs_dra(p) for p in pending):
        fx.start_list("ResourceClaim")
        fx.start_list("ResourceSlice")
        fx.start_list("DeviceClass")
        fx.start_list("ResourceClaimTemplate", namespaces)


def _collect(fx: _Fetcher, targets: list[Obj]) -> None:
    out = fx.out
    nodes = fx.result("Node", required=True) or []
    pods = fx.result("Pod", required=True) or []
    # Existing pods' own namespaceSelector terms (anti-affinity, preferred terms) need Namespaces too.
    if "Namespace" not in fx.lists and any(uses_namespace_selector(p) for p in pods):
        fx.start_list("Namespace")
    # The targets as fetched are fresher than the list; a terminal target is not in the list at all.
    by_key = {_key(p): p for p in targets}
    transform = fx._transform("Pod")
    merged = [p for p in pods if _key(p) not in by_key]
    merged.extend(transform(p) if transform else p for p in targets)
    out.objects.extend(nodes)
    out.objects.extend(merged)
    for kind in fx.lists:
        if kind in ("Node", "Pod"):
            continue
        items = fx.result(kind)
        if items is not None:
            out.objects.extend(items)


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


def _finish_events(fx: _Fetcher, fut: Future[list[Obj]], targets: list[Obj]) -> None:
    try:
        events = fut.result()
    except ApiStatusError as e:
        fx.out.events_readable = False
        fx.out.warnings.append(_missing_line(_EVENTS_CORE, _describe_status(e)))
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
) -> tuple[Fetched, Dialect]:
    """Everything `kdiagnose pod NAME` needs, in two rounds: /version + the pod, then the lists in parallel."""
    reader = ApiReader(target, timeout)
    fx = _Fetcher(reader, full)
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
            raise ClusterError(f'cannot get pod "{namespace}/{name}": {_describe_status(e)}') from None
        out = fx.out
        out.server_version = server_version
        out.warnings.extend(warnings)
        out.targets = [pod]
        selector = f"regarding.kind=Pod,regarding.name={name},regarding.namespace={namespace}"
        events_f = fx.pool.submit(fx.events, namespace, selector)
        if not _pod_spec(pod).get("nodeName") and (pod.get("status") or {}).get("phase") not in (
            "Succeeded",
            "Failed",
        ):
            _plan(fx, [pod], [namespace], dialect)
            _collect(fx, [pod])
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
    target: ClusterTarget, *, timeout: float = 30.0, k8s_version: str | None = None
) -> tuple[Fetched, Dialect]:
    """The whole cluster as the scheduler sees it (every kind the replay may read), for `kdiagnose check
    --context`: the manifests' needs are unknown until they are expanded, so nothing is skipped."""
    reader = ApiReader(target, timeout)
    fx = _Fetcher(reader, False)
    start = time.monotonic()
    try:
        server_version, dialect, warnings = _connect(reader, k8s_version)
        fx.out.server_version = server_version
        fx.out.warnings.extend(warnings)
        fx.start_list("Node")
        fx.start_list("Pod", field_selector=POD_PHASE_SELECTOR)
        for kind in (*_STORAGE_KINDS, *_PREEMPTION_KINDS, *_SPREAD_KINDS, "Namespace"):
            fx.start_list(kind)
        if dialect.dra_enabled:
            for kind in _DRA_KINDS:
                fx.start_list(kind)
        _collect(fx, [])
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
            raise ClusterError(f'cannot get configmap "{ns}/{name}": {_describe_status(e)}') from None
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
) -> tuple[Fetched, Dialect]:
    """Everything `kdiagnose pods` needs: the Pending pods in scope (namespace None = all), then the lists."""
    reader = ApiReader(target, timeout)
    fx = _Fetcher(reader, full)
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
            raise ClusterError(f"cannot list pods: {_describe_status(e)}") from None
        out = fx.out
        out.server_version = server_version
        out.warnings.extend(warnings)
        out.targets = targets
        events_f = fx.pool.submit(fx.events, namespace, "reason=FailedScheduling")
        namespaces: list[str | None] = [namespace] if namespace else [None]
        if targets:
            _plan(fx, targets, namespaces, dialect)
            _collect(fx, targets)
        _finish_events(fx, events_f, targets)
        out.elapsed = time.monotonic() - start
        out.requests = reader.requests
        return out, dialect
    finally:
        fx.close()
        reader.close()
