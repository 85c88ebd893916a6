"""GET-only access to one API server: raw JSON bytes parsed with orjson (never the client's generated models,
which are slow and drop fields they do not know), paginated lists (limit + continue, one restart on 410
Expired; the page size is kubectl's --chunk-size), and transport and Status errors turned into one-line messages.

One of the modules that import `kubernetes` (lazily, inside the methods, so the CLI starts fast). Only GET
is ever sent.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from kdiagnose.errors import ClusterError
from kdiagnose.load.kinds import KindSpec
from kdiagnose.load.kubeconfig import ClusterTarget

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_PAGES",
    "PAGE_LIMIT",
    "ApiBodyError",
    "ApiReader",
    "ApiStatusError",
    "describe_status",
    "json_object",
    "list_item",
    "list_items",
    "needed_permission",
]

Obj = dict[str, Any]
T = TypeVar("T")

PAGE_LIMIT = 500
MAX_PAGES = 10_000  # 5 million objects of one kind: a server past this is looping
MAX_BODY_BYTES = 512 << 20  # one response (a page of 500 objects is a few MB)


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
# apimachinery's NewNotFound: `<resource> "<name>" not found`.
_OBJECT_NOT_FOUND_RE = re.compile(r'^\S+ "[^"]*" not found$')


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


class ApiBodyError(ApiStatusError):
    """A 2xx answer that is not what the API serves (truncated JSON, an HTML page, a List of the wrong shape,
    a looping continue token): reported like a failed request, so an optional kind degrades to "not verified"."""

    def __init__(self, path: str, message: str, status: int = 200) -> None:
        super().__init__(status, "InvalidResponse", message, path)


def describe_status(e: ApiStatusError) -> str:
    """The short cause for an error line: `forbidden: user "x" needs RBAC list on nodes at the cluster scope`, `not served by this
    API server`, ..."""
    if isinstance(e, ApiBodyError):
        return f"malformed answer: {e.message}"
    if e.status == 403:
        m = _FORBIDDEN_USER_RE.search(e.message)
        who = f'user "{m.group(1)}"' if m else "this context's user"
        return f"forbidden: {who} needs RBAC {needed_permission(e.verb, e.path)}"
    if e.status == 401:
        return "unauthorized (the context's credentials were rejected)"
    if e.status == 404:
        # A GET of a missing object is 404 too ('configmaps "x" not found'): the object, not the API, is absent.
        # A group the server does not serve answers "404 page not found" (plain text, no Status).
        if _OBJECT_NOT_FOUND_RE.match(e.message):
            return "not found"
        return "not served by this API server"
    return f"{e.status} {e.reason or 'error'}" + (f": {e.message}" if e.message else "")


def _dropped(e: BaseException) -> bool:
    """The connection went away under the request (reset, closed before or while answering, EOF during
    the TLS handshake): not a refusal, a timeout or a certificate error."""
    import ssl

    import urllib3

    reason: Any = getattr(e, "reason", None) or e
    if isinstance(reason, urllib3.exceptions.ProtocolError | ConnectionResetError | BrokenPipeError):
        return True
    if isinstance(reason, ssl.SSLEOFError | ssl.SSLZeroReturnError):
        return True
    text = str(reason)
    return isinstance(reason, urllib3.exceptions.SSLError) and (
        "EOF occurred" in text or "UNEXPECTED_EOF" in text
    )


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
        # --request-timeout is a deadline for the whole request: urllib3's timeout is per socket operation,
        # so a server trickling a byte a second would keep the run alive forever. A timer shuts the socket
        # at the deadline, and the body is read in pieces, checked against it.
        deadline = time.monotonic() + self.timeout if self.timeout > 0 else float("inf")  # 0: none
        retried = False
        while True:
            self.requests += 1
            timer: threading.Timer | None = None
            try:
                resp: Any = self.api.call_api(
                    method, url, header_params=headers, _request_timeout=self.timeout
                )
                raw = resp.response
                if self.timeout > 0:
                    timer = threading.Timer(max(deadline - time.monotonic(), 0.0), raw.shutdown)
                    timer.daemon = True
                    timer.start()
                data = self._body(raw, path, deadline)
                break
            except (urllib3.exceptions.HTTPError, OSError) as e:
                if time.monotonic() >= deadline:
                    raise ClusterError(self._timeout_message(path)) from None
                # A connection dropped under a GET (the server restarting, a proxy closing an idle
                # connection) is tried once more on a new connection, as client-go retries a GET on
                # "connection reset" and EOF (rest/request.go isErrRetryableFunc); a page is whole or
                # not at all, so a retry never mixes two answers.
                if not retried and _dropped(e):
                    retried = True
                    continue
                if isinstance(e, urllib3.exceptions.HTTPError):
                    raise ClusterError(self._describe_transport_error(e, path)) from None
                raise ClusterError(
                    f"cannot reach the API server {self.target.server} (context {self.target.context}): {e}"
                ) from None
            finally:
                if timer is not None:
                    timer.cancel()
        if not 200 <= resp.status < 300:
            raise self._status_error(resp.status, data, path, verb)
        return data

    def _body(self, raw: Any, path: str, deadline: float) -> bytes:
        parts: list[bytes] = []
        size = 0
        while True:
            chunk = raw.read1(1 << 16)
            if not chunk:
                return b"".join(parts)
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise ClusterError(f"GET {path}: the answer is larger than {MAX_BODY_BYTES >> 20} MiB")
            parts.append(chunk)
            if time.monotonic() >= deadline:
                raise ClusterError(self._timeout_message(path))

    def _timeout_message(self, path: str) -> str:
        where = f"the API server {self.target.server} (context {self.target.context})"
        return f"{where} did not answer GET {path} within {self.timeout:g}s (--request-timeout)"

    def _describe_transport_error(self, e: Exception, path: str) -> str:
        import urllib3

        reason = getattr(e, "reason", None) or e
        where = f"the API server {self.target.server} (context {self.target.context})"
        # NewConnectionError subclasses ConnectTimeoutError: test it first.
        if isinstance(reason, urllib3.exceptions.NewConnectionError | ConnectionRefusedError):
            cause = str(reason).rsplit("] ", 1)[-1].rstrip("')\"") if "]" in str(reason) else str(reason)
            return f"cannot reach {where}: {cause.lower()}"
        if isinstance(reason, urllib3.exceptions.TimeoutError | TimeoutError):
            return self._timeout_message(path)
        text = str(reason)
        if "refused" in text.lower():
            return f"cannot reach {where}: connection refused"
        if _dropped(reason):
            # urllib3 nests the socket error in a tuple repr ("('Connection aborted.', RemoteDisconnected(...")
            return f"cannot reach {where}: the connection was closed before the answer was complete"
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

    def _json(self, path: str, query: list[tuple[str, str]], verb: str = "get") -> Obj:
        """The answer as a JSON object, or ApiBodyError (truncated, not JSON, not an object)."""
        return json_object(self._raw(path, query, verb), path)

    def get_json(self, path: str, query: list[tuple[str, str]] | None = None) -> Obj:
        return self._json(path, query or [])

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
        `limit` defaults to the reader's chunk size; 0 asks for the whole list at once. A token seen before,
        or more than MAX_PAGES pages, is a paging loop (ApiBodyError)."""

        def page(data: bytes, path: str) -> tuple[list[Obj], Any]:
            doc = json_object(data, path)
            items = list_items(doc, spec, path)
            return (list(map(transform, items)) if transform else items), doc.get("metadata")

        out: list[Obj] = []
        for items in self.pages(
            spec, namespace, page, label_selector=label_selector, field_selector=field_selector, limit=limit
        ):
            out.extend(items)
        return out

    def pages(
        self,
        spec: KindSpec,
        namespace: str | None,
        decode: Callable[[bytes, str], tuple[T, Any]],
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int | None = None,
    ) -> Sequence[T]:
        """`list`'s paging, each page's body given to `decode`, which returns what the page holds and its
        List metadata (read for the continue token): one value per page, in order. A 410 Expired restarts
        the list once (what `decode` returned for the pages before is dropped)."""
        page = self.chunk_size if limit is None else limit

        path = spec.path(namespace)
        restarted = False
        while True:
            out: list[T] = []
            token = ""
            seen: set[str] = set()
            pages = 0
            try:
                while True:
                    query = [("limit", str(page))] if page > 0 else []
                    if label_selector:
                        query.append(("labelSelector", label_selector))
                    if field_selector:
                        query.append(("fieldSelector", field_selector))
                    if token:
                        query.append(("continue", token))
                    got, meta = decode(self._raw(path, query, "list"), path)
                    out.append(got)
                    raw_token = meta.get("continue") if isinstance(meta, dict) else None
                    if not raw_token:
                        return out
                    if not isinstance(raw_token, str):
                        raise ApiBodyError(path, f"LIST {path}: the continue token is not a string")
                    token = raw_token
                    pages += 1
                    if token in seen or pages >= MAX_PAGES:
                        why = (
                            "repeated a continue token"
                            if token in seen
                            else f"sent more than {MAX_PAGES} pages"
                        )
                        raise ApiBodyError(path, f"LIST {path}: the server {why} (a paging loop)")
                    seen.add(token)
            except ApiStatusError as e:
                if e.status == 410 and not restarted:
                    restarted = True  # the snapshot behind the continue token was compacted
                    continue
                raise


def json_object(data: bytes, path: str) -> Obj:
    """An answer's body as a JSON object, or ApiBodyError (truncated, not JSON, not an object)."""
    import orjson

    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        head = data[:40].decode("utf-8", "replace").strip()
        what = "an HTML page" if head.lower().startswith(("<!doctype", "<html")) else "not valid JSON"
        raise ApiBodyError(path, f"GET {path}: {what} ({len(data)} bytes; {str(e).split(':')[0]})") from None
    if not isinstance(doc, dict):
        raise ApiBodyError(path, f"GET {path}: a JSON {type(doc).__name__}, not an object")
    return doc


def list_items(doc: Obj, spec: KindSpec, path: str) -> list[Obj]:
    """A List answer's items, each with the kind and apiVersion the wire leaves out."""
    got = doc.get("items")
    if got is not None and not isinstance(got, list):
        raise ApiBodyError(path, f"LIST {path}: items is a {type(got).__name__}, not a list")
    return [list_item(it, spec, path) for it in got or ()]


def list_item(it: Any, spec: KindSpec, path: str) -> Obj:
    if not isinstance(it, dict):
        raise ApiBodyError(path, f"LIST {path}: an item is a {type(it).__name__}, not an object")
    # List items carry no kind/apiVersion on the wire.
    return {"apiVersion": spec.group_version, "kind": spec.kind, **it}
