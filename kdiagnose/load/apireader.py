"""GET-only access to one API server: raw JSON bytes parsed with orjson (never the client's generated models,
which are slow and drop fields they do not know), paginated lists (limit + continue, one restart on 410
Expired), and transport and Status errors turned into one-line messages.

One of the modules that import `kubernetes` (lazily, inside the methods, so the CLI starts fast). Only GET
is ever sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kdiagnose.errors import ClusterError
from kdiagnose.load.kinds import KindSpec
from kdiagnose.load.kubeconfig import ClusterTarget

__all__ = ["PAGE_LIMIT", "ApiReader", "ApiStatusError", "describe_status"]

Obj = dict[str, Any]

PAGE_LIMIT = 500


class ApiStatusError(Exception):
    """A non-2xx answer, with the Status object's reason and message."""

    def __init__(self, status: int, reason: str, message: str, path: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.path = path


def describe_status(e: ApiStatusError) -> str:
    """The short cause for an error line: `forbidden`, `not served by this API server`, ..."""
    if e.status == 403:
        return "forbidden"
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
