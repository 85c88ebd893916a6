"""GET-only access to one API server: raw JSON bytes parsed with orjson (never the client's generated models,
which are slow and drop fields they do not know), paginated lists (limit + continue, one restart on 410
Expired; the page size is kubectl's --chunk-size), and transport and Status errors turned into one-line messages.

One of the modules that import `kubernetes` (lazily, inside the methods, so the CLI starts fast). Only GET
is ever sent.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from kdiagnose.errors import ClusterError
from kdiagnose.load.kinds import KindSpec
from kdiagnose.load.kubeconfig import ClusterTarget

__all__ = ["PAGE_LIMIT", "ApiReader", "ApiStatusError", "describe_status", "needed_permission"]

Obj = dict[str, Any]

PAGE_LIMIT = 500


class ApiStatusError(Exception):
    """A non-2xx answer, with the Status object's reason and message."""

    def __init__(self, status: int, reason: str, message: str, path: str, verb: str = "get") -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.path = path
        self.verb = verb


# The RBAC authorizer's denial names the user (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
# responsewriters/errors.go forbiddenMessage): `... is forbidden: User "alice" cannot list resource ...`.
_FORBIDDEN_USER_RE = re.compile(r'is forbidden: User "([^"]*)" cannot ')


def needed_permission(verb: str, path: str) -> str:
    """The RBAC permission a GET of `path` needs: `list on nodes at the cluster scope`,
    `get on pods in namespace "shop"`, `list on storageclasses.storage.k8s.io at the cluster scope`."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    group, rest = "", parts[2:]
    if parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    resource = rest[0] if rest else "?"
    scope = f'in namespace "{namespace}"' if namespace else "at the cluster scope"
    return f"{verb} on {resource}{'.' + group if group else ''} {scope}"


def describe_status(e: ApiStatusError) -> str:
    """The short cause for an error line: `forbidden: user "x" needs RBAC list on nodes at the cluster scope`, `not served by this
    API server`, ..."""
    if e.status == 403:
        m = _FORBIDDEN_USER_RE.search(e.message)
        who = f'user "{m.group(1)}"' if m else "this context's user"
        return f"forbidden: {who} needs RBAC {needed_permission(e.verb, e.path)}"
    if e.status == 401:
        return "unauthorized (the context's credentials were rejected)"
    if e.status == 404:
        # A GET of a missing object is 404 too ('configmaps "x" not found'): the object, not the API, is absent.
        if e.message.endswith(" not found"):
            return "not found"
        return "not served by this API server"
    return f"{e.status} {e.reason or 'error'}" + (f": {e.message}" if e.message else "")


class ApiReader:
    """GET-only access to one API server; thread-safe (urllib3's pool is)."""

    def __init__(self, target: ClusterTarget, timeout: float = 30.0, chunk_size: int = PAGE_LIMIT) -> None:
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
        self.chunk_size = chunk_size  # 0: one request per list, as kubectl --chunk-size=0
        self.api: Any = ApiClient(cfg)
        self.api.user_agent = "kdiagnose"
        self.requests = 0

    def close(self) -> None:
        self.api.close()

    def _raw(self, path: str, query: list[tuple[str, str]], verb: str = "get") -> bytes:
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
            raise self._status_error(resp.status, data, path, verb)
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
    def _status_error(status: int, data: bytes, path: str, verb: str = "get") -> ApiStatusError:
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
            verb,
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
        limit: int | None = None,
    ) -> list[Obj]:
        """Every item of a paginated list (limit + continue); a 410 Expired continue restarts it once.
        `limit` defaults to the reader's chunk size; 0 asks for the whole list at once."""
        import orjson

        page = self.chunk_size if limit is None else limit

        path = spec.path(namespace)
        restarted = False
        while True:
            items: list[Obj] = []
            token = ""
            try:
                while True:
                    query = [("limit", str(page))] if page > 0 else []
                    if label_selector:
                        query.append(("labelSelector", label_selector))
                    if field_selector:
                        query.append(("fieldSelector", field_selector))
                    if token:
                        query.append(("continue", token))
                    doc = orjson.loads(self._raw(path, query, "list"))
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
