"""A small but real Kubernetes API server for tests: HTTP on 127.0.0.1, loaded from a list of objects.

It speaks what `kdiagnose pod/pods` use, with the API server's shapes: /version, /api and /apis
discovery, GET and LIST for core and named groups (list items carry no kind/apiVersion), labelSelector and
fieldSelector, `limit`/`continue` pagination (continue tokens expire with 410 on demand), Status objects
for 401/403/404/405/410, bearer-token auth, a per-path delay for timeouts, and a log of every request so a
test can prove that only GETs were sent. Core Events are also served as events.k8s.io/v1 Events (the
real server converts between the two, with `regarding.*` field selectors).
"""

from __future__ import annotations

import base64
import copy
import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

__all__ = ["RESOURCES", "FakeAPIServer", "Resource"]

Obj = dict[str, Any]


@dataclass(frozen=True)
class Resource:
    group: str  # "" for core
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


RESOURCES: list[Resource] = [
    Resource("", "v1", "pods", "Pod", True),
    Resource("", "v1", "nodes", "Node", False),
    Resource("", "v1", "namespaces", "Namespace", False),
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True),
    Resource("", "v1", "persistentvolumes", "PersistentVolume", False),
    Resource("", "v1", "services", "Service", True),
    Resource("", "v1", "replicationcontrollers", "ReplicationController", True),
    Resource("", "v1", "events", "Event", True),
    Resource("", "v1", "limitranges", "LimitRange", True),
    Resource("", "v1", "configmaps", "ConfigMap", True),
    Resource("apps", "v1", "replicasets", "ReplicaSet", True),
    Resource("apps", "v1", "statefulsets", "StatefulSet", True),
    Resource("apps", "v1", "deployments", "Deployment", True),
    Resource("apps", "v1", "daemonsets", "DaemonSet", True),
    Resource("batch", "v1", "jobs", "Job", True),
    Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False),
    Resource("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    Resource("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    Resource("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True),
    Resource("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True),
    Resource("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False),
    Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True),
    Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True),
    Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False),
    Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    Resource("resource.k8s.io", "v1", "devicetaintrules", "DeviceTaintRule", False),
    Resource("events.k8s.io", "v1", "events", "Event", True),
    Resource("karpenter.sh", "v1", "nodepools", "NodePool", False),
    Resource("karpenter.sh", "v1", "nodeclaims", "NodeClaim", False),
]

_PLAIN = "__plain_text__"  # a body key: answer this text as text/plain instead of JSON

_EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter."
)


def _status(code: int, reason: str, message: str, details: Obj | None = None) -> Obj:
    out: Obj = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        out["details"] = details
    return out


def _field(obj: Obj, path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    return str(cur)


def _split_outside_parens(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return [s.strip() for s in out if s.strip()]


def label_selector_matches(selector: str, labels: dict[str, str]) -> bool:
    """`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, comma = AND."""
    for req in _split_outside_parens(selector):
        if " notin " in req:
            key, _, vals = req.partition(" notin ")
            allowed = {v.strip() for v in vals.strip().strip("()").split(",")}
            if labels.get(key.strip()) in allowed:
                return False
        elif " in " in req:
            key, _, vals = req.partition(" in ")
            allowed = {v.strip() for v in vals.strip().strip("()").split(",")}
            if labels.get(key.strip()) not in allowed:
                return False
        elif "!=" in req:
            key, _, val = req.partition("!=")
            if labels.get(key.strip()) == val.strip():
                return False
        elif "=" in req:
            key, _, val = req.replace("==", "=").partition("=")
            if labels.get(key.strip()) != val.strip():
                return False
        elif req.startswith("!"):
            if req[1:].strip() in labels:
                return False
        elif req not in labels:
            return False
    return True


def field_selector_matches(selector: str, obj: Obj) -> bool:
    for req in _split_outside_parens(selector):
        if "!=" in req:
            key, _, val = req.partition("!=")
            if _field(obj, key.strip()) == val.strip():
                return False
        else:
            key, _, val = req.replace("==", "=").partition("=")
            if _field(obj, key.strip()) != val.strip():
                return False
    return True


def core_event_to_events_v1(ev: Obj) -> Obj:
    """The API server's conversion of a core/v1 Event to events.k8s.io/v1 (pkg/apis/events/v1)."""
    meta = copy.deepcopy(ev.get("metadata") or {})
    out: Obj = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": meta}
    if ev.get("involvedObject") is not None:
        out["regarding"] = copy.deepcopy(ev["involvedObject"])
    for src, dst in (
        ("reason", "reason"),
        ("type", "type"),
        ("message", "note"),
        ("action", "action"),
        ("eventTime", "eventTime"),
        ("reportingComponent", "reportingController"),
        ("reportingInstance", "reportingInstance"),
        ("count", "deprecatedCount"),
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
        ("source", "deprecatedSource"),
        ("series", "series"),
    ):
        if ev.get(src) not in (None, ""):
            out[dst] = copy.deepcopy(ev[src])
    if (
        "reportingController" not in out
        and isinstance(ev.get("source"), dict)
        and ev["source"].get("component")
    ):
        out["reportingController"] = ev["source"]["component"]
    return out


class FakeAPIServer:
    """Start with `with FakeAPIServer(objects) as srv:`; `srv.kubeconfig(path)` writes a kubeconfig for it."""

    def __init__(
        self,
        objects: Iterable[Obj] = (),
        *,
        git_version: str = "v1.34.1",
        token: str = "test-token",
        serve_events_v1: bool = True,
    ) -> None:
        self.git_version = git_version
        self.token = token
        self.resources = [r for r in RESOURCES if serve_events_v1 or r.group != "events.k8s.io"]
        self.store: dict[tuple[str, str], list[Obj]] = {}  # (group_version, plural) -> objects
        self.forbidden: set[str] = set()  # plurals (or "group/plural") whose every request gets 403
        # A namespace-scoped user (a RoleBinding in these namespaces only): every cluster-scoped request and
        # every request in another namespace gets 403, as RBAC answers. None: no such restriction.
        self.only_namespaces: set[str] | None = None
        self.user = "system:serviceaccount:test:kdiagnose"  # the name 403 messages give
        self.not_served_groups: set[str] = set()  # API groups that 404 (not installed)
        self.expire_once: set[str] = set()  # plurals whose first continued list request gets 410
        self.delays: dict[str, float] = {}  # path substring -> seconds to sleep before answering
        # path substring -> a fault in the answer (hostile-server tests): "truncated" (JSON cut in half),
        # "html" (an HTML page with 200), "array" (a List as a JSON array), "items-not-list", "trickle"
        # (the body one byte every 0.2 s), "repeat-continue" (the same continue token on every page),
        # "status-403"/"status-500", "drop" (the connection closed with no answer, as a restarting
        # server or a proxy does), "drop-once" (that, for the first matching request only).
        self.faults: dict[str, str] = {}
        self.requests: list[tuple[str, str]] = []  # (method, path with query) of every request
        # Answers kept by (method, path, credentials) once encoded, for requests without a fault: a server
        # that costs a benchmark's client cores no encoding after the first read (benchmarks/live.py --remote).
        self.remember_answers = False
        self._answers: dict[tuple[str, str, str], tuple[int, str, bytes]] = {}
        self._lock = threading.Lock()
        self._rv = 1000
        self._list_cache: dict[tuple[Any, ...], list[Obj]] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        for obj in objects:
            self.add(obj)

    # --- loading ---
    def _resource_for_kind(self, kind: str, api_version: str) -> list[Resource]:
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        out = [r for r in RESOURCES if r.kind == kind and r.group == group]
        if kind == "Event":
            # One storage, two APIs.
            out = [r for r in RESOURCES if r.kind == "Event"]
        return out or [r for r in RESOURCES if r.kind == kind]

    def add(self, obj: Obj) -> None:
        kind = str(obj.get("kind") or "")
        api_version = str(obj.get("apiVersion") or "v1")
        if kind == "Event" and api_version.startswith("events.k8s.io"):
            raise ValueError("load Events as core/v1; they are converted for events.k8s.io/v1")
        resources = self._resource_for_kind(kind, api_version)
        if not resources:
            raise ValueError(f"fake API server does not serve kind {kind!r}")
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        self._rv += 1
        meta.setdefault("resourceVersion", str(self._rv))
        meta.setdefault("uid", f"uid-{self._rv}")
        if resources[0].namespaced:
            meta.setdefault("namespace", "default")
        for r in resources:
            stored = obj
            if r.group == "events.k8s.io":
                stored = core_event_to_events_v1(obj)
            else:
                stored = {**obj, "apiVersion": r.group_version, "kind": r.kind}
            self.store.setdefault((r.group_version, r.plural), []).append(stored)

    # --- lifecycle ---
    def start(self) -> FakeAPIServer:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAPIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def kubeconfig(
        self,
        path: Path,
        *,
        context: str = "fake",
        namespace: str | None = "default",
        current_context: str | None = "",
        token: str | None = None,
        server: str | None = None,
        extra_contexts: Iterable[tuple[str, str]] = (),
    ) -> Path:
        """Write a kubeconfig (JSON is YAML) for this server; current_context "" = `context`, None = unset."""
        ctx: Obj = {"cluster": context, "user": context}
        if namespace is not None:
            ctx["namespace"] = namespace
        cfg: Obj = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": server or self.url}}],
            "users": [{"name": context, "user": {"token": token or self.token}}],
            "contexts": [{"name": context, "context": ctx}],
        }
        for name, ns in extra_contexts:
            cfg["contexts"].append(
                {"name": name, "context": {"cluster": context, "user": context, "namespace": ns}}
            )
        if current_context is not None:
            cfg["current-context"] = current_context or context
        path.write_text(json.dumps(cfg, indent=1))
        return path

    def methods(self) -> set[str]:
        with self._lock:
            return {m for m, _ in self.requests}

    def paths(self) -> list[str]:
        with self._lock:
            return [p for _, p in self.requests]

    # --- serving ---
    def _log(self, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((method, path))

    def handle(self, method: str, raw_path: str, headers: dict[str, str]) -> tuple[int, Obj]:
        self._log(method, raw_path)
        for fragment, seconds in self.delays.items():
            if fragment in raw_path:
                time.sleep(seconds)
        if headers.get("authorization") != f"Bearer {self.token}":
            return 401, _status(401, "Unauthorized", "Unauthorized")
        if method != "GET":
            return 405, _status(
                405, "MethodNotAllowed", f"the fake API server is read-only: {method} not allowed"
            )
        parts = urlsplit(raw_path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        segs = [s for s in parts.path.split("/") if s]
        if segs == ["version"]:
            return 200, self._version()
        if segs == ["api"]:
            return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
        if segs == ["apis"]:
            return 200, self._group_list()
        if segs[:1] == ["api"] and len(segs) >= 2:
            return self._resource_request("", segs[1], segs[2:], query)
        if segs[:1] == ["apis"] and len(segs) >= 2 and not any(r.group == segs[1] for r in self._served()):
            # A group the server does not serve falls through to its NotFoundHandler: plain text, no Status
            # (seen from the real kube-apiserver, tests/e2e/test_rbac_events.py).
            return 404, {_PLAIN: "404 page not found\n"}
        if segs[:1] == ["apis"] and len(segs) >= 3:
            return self._resource_request(segs[1], segs[2], segs[3:], query)
        if segs[:1] == ["apis"] and len(segs) == 2:
            return self._group(segs[1])
        return 404, _status(404, "NotFound", "the server could not find the requested resource")

    def _version(self) -> Obj:
        core = self.git_version.lstrip("v").split("-")[0].split("+")[0].split(".")
        return {
            "major": core[0],
            "minor": core[1] if len(core) > 1 else "",
            "gitVersion": self.git_version,
            "platform": "linux/amd64",
        }

    def _served(self) -> list[Resource]:
        return [r for r in self.resources if r.group not in self.not_served_groups]

    def _group_list(self) -> Obj:
        groups: dict[str, list[str]] = {}
        for r in self._served():
            if r.group:
                groups.setdefault(r.group, [])
                if r.version not in groups[r.group]:
                    groups[r.group].append(r.version)
        return {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [
                {
                    "name": g,
                    "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs],
                    "preferredVersion": {"groupVersion": f"{g}/{vs[0]}", "version": vs[0]},
                }
                for g, vs in groups.items()
            ],
        }

    def _group(self, group: str) -> tuple[int, Obj]:
        versions = sorted({r.version for r in self._served() if r.group == group})
        if not versions:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        return 200, {
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": group,
            "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in versions],
            "preferredVersion": {"groupVersion": f"{group}/{versions[0]}", "version": versions[0]},
        }

    def _resource_list(self, group: str, version: str) -> tuple[int, Obj]:
        rs = [r for r in self._served() if r.group == group and r.version == version]
        if not rs:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        gv = f"{group}/{version}" if group else version
        return 200, {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": gv,
            "resources": [
                {
                    "name": r.plural,
                    "singularName": "",
                    "namespaced": r.namespaced,
                    "kind": r.kind,
                    "verbs": ["get", "list", "watch"],
                }
                for r in rs
            ],
        }

    def _resource_request(
        self, group: str, version: str, rest: list[str], query: dict[str, str]
    ) -> tuple[int, Obj]:
        if not rest:
            return self._resource_list(group, version)
        namespace: str | None = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        plural, name = rest[0], (rest[1] if len(rest) > 1 else None)
        res = next(
            (r for r in self._served() if r.group == group and r.version == version and r.plural == plural),
            None,
        )
        if res is None:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        gr = f"{plural}.{group}" if group else plural
        denied = plural in self.forbidden or f"{group}/{plural}" in self.forbidden
        if self.only_namespaces is not None:
            denied = denied or not (res.namespaced and namespace in self.only_namespaces)
        if denied:
            # The API server's words (apiserver/pkg/endpoints/handlers/responsewriters/errors.go
            # forbiddenMessage, wrapped by apimachinery's NewForbidden: `pods "x" is forbidden: ...`).
            verb = "get" if name else "list"
            scope = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
            what = f'{gr} "{name}"' if name else gr
            msg = f'{what} is forbidden: User "{self.user}" cannot {verb} resource "{plural}" in API group "{group}"{scope}'
            details: Obj = {"kind": plural, **({"group": group} if group else {})}
            if name:
                details["name"] = name
            return 403, _status(403, "Forbidden", msg, details)
        items = self.store.get((res.group_version, plural), [])
        ns = namespace if res.namespaced else None
        if name is not None:
            for o in items:
                if o["metadata"].get("name") == name and (ns is None or o["metadata"].get("namespace") == ns):
                    return 200, o
            return 404, _status(404, "NotFound", f'{gr} "{name}" not found', {"name": name, "kind": plural})
        return self._list(res, items, ns, query)

    def _list(
        self, res: Resource, items: list[Obj], namespace: str | None, query: dict[str, str]
    ) -> tuple[int, Obj]:
        # Filtered results are cached per query so paging through 150,000 pods stays linear.
        cache_key = (
            res.group_version,
            res.plural,
            len(items),
            namespace,
            query.get("labelSelector"),
            query.get("fieldSelector"),
        )
        cached = self._list_cache.get(cache_key)
        if cached is None:
            cached = items
            if namespace is not None:
                cached = [o for o in cached if o["metadata"].get("namespace") == namespace]
            if query.get("labelSelector"):
                sel = query["labelSelector"]
                cached = [o for o in cached if label_selector_matches(sel, o["metadata"].get("labels") or {})]
            if query.get("fieldSelector"):
                sel = query["fieldSelector"]
                cached = [o for o in cached if field_selector_matches(sel, o)]
            self._list_cache[cache_key] = cached
        items = cached
        offset = 0
        rv = str(self._rv)
        token = query.get("continue") or ""
        if token:
            with self._lock:
                expire = res.plural in self.expire_once
                self.expire_once.discard(res.plural)
            if expire:
                return 410, _status(410, "Expired", _EXPIRED_MESSAGE)
            try:
                state = json.loads(base64.urlsafe_b64decode(token.encode()))
                offset = int(state["offset"])
                rv = str(state["rv"])
            except (ValueError, KeyError):
                return 400, _status(400, "BadRequest", "invalid continue token")
        limit = int(query.get("limit") or 0)
        page = items[offset : offset + limit] if limit > 0 else items[offset:]
        meta: Obj = {"resourceVersion": rv}
        end = offset + len(page)
        if limit > 0 and end < len(items):
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps({"rv": rv, "offset": end}).encode()
            ).decode()
            meta["remainingItemCount"] = len(items) - end
        out_items = []
        for o in page:
            item = dict(o)
            # List items carry no kind/apiVersion on the wire (the List does).
            item.pop("kind", None)
            item.pop("apiVersion", None)
            out_items.append(item)
        return 200, {
            "kind": f"{res.kind}List",
            "apiVersion": res.group_version,
            "metadata": meta,
            "items": out_items,
        }


def _encode(body: Any) -> bytes:
    """orjson as fast as a real API server's encoder, so a benchmark's client is not waiting on the fake
    (benchmarks/live.py: the stdlib took ~10 s of the server's core for 150,000 pods); the stdlib for what
    orjson refuses (integers past 64 bits, which hostile-input tests send)."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return json.dumps(body).encode()


def _make_handler(server: FakeAPIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            fault = next((f for frag, f in server.faults.items() if frag in self.path), "")
            if fault in ("drop", "drop-once"):
                server._log(self.command, self.path)
                if fault == "drop-once":
                    with server._lock:
                        server.faults = {k: v for k, v in server.faults.items() if v != "drop-once"}
                self.close_connection = True  # no status line: the client sees the connection go away
                return
            path = self.path
            # By the credentials too: a request with another token is answered (and refused) afresh.
            memo = (self.command, path, self.headers.get("Authorization") or "")
            kept = server._answers.get(memo) if server.remember_answers and not fault else None
            if kept is not None:
                server._log(self.command, path)
                self._answer(*kept)
                return
            if fault == "repeat-continue":  # every page is the first page, with the same token
                path = "&".join(p for p in path.split("&") if not p.startswith("continue="))
            try:
                code, body = server.handle(self.command, path, headers)
            except Exception as e:  # a bug in the fake: answer 500 rather than hang the client
                code, body = 500, _status(500, "InternalError", repr(e))
            content_type = "application/json"
            if fault == "repeat-continue" and isinstance(body.get("metadata"), dict):
                body["metadata"]["continue"] = "same-token"
            elif fault == "array" and isinstance(body.get("items"), list):
                body = body["items"]  # type: ignore[assignment]
            elif fault == "items-not-list":
                body["items"] = {"not": "a list"}
            elif fault.startswith("status-"):
                code = int(fault.removeprefix("status-"))
                body = _status(code, "Forbidden" if code == 403 else "InternalError", "injected fault")
            data = _encode(body)
            if isinstance(body, dict) and _PLAIN in body:
                content_type, data = "text/plain; charset=utf-8", str(body[_PLAIN]).encode()
            if fault == "truncated":
                data = data[: len(data) // 2]
            elif fault == "html":
                content_type = "text/html"
                data = b"<!DOCTYPE html><html><body><h1>Sign in</h1></body></html>"
            if server.remember_answers and not fault and self.command == "GET":
                server._answers[memo] = (code, content_type, data)
            self._answer(code, content_type, data, fault)

        def _answer(self, code: int, content_type: str, data: bytes, fault: str = "") -> None:
            try:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if fault == "trickle":
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        time.sleep(0.2)
                else:
                    self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        do_GET = _serve
        do_POST = _serve
        do_PUT = _serve
        do_PATCH = _serve
        do_DELETE = _serve
        do_HEAD = _serve
        do_OPTIONS = _serve

    return Handler
