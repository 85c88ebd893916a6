"""The live Pod list decoded the way the offline loader decodes a big dump (load/stream_json.py).

A live read of a 150,000-pod cluster used to decode every page whole (orjson, ~4 GB of dicts at the peak),
trim each pod, and model, validate and admit each pod from its dict in build_snapshot. Here each page's
body is read for its List metadata only (the continue token), `items` kept as bytes (msgspec.Raw), and the
items are decoded as stream_json decodes a block of a dump: a bound pod of the usual shape becomes a
compact record (load/compact.py: its per-pod values, and a Template shared by every pod of its spec, which
is validated, admitted and modelled once), any other item the per-object way (`trim_pod` of its dict, as
the list reader has always made it). The items of one page are decoded in a second thread while the next
page is fetched, so the API server encodes page N+1 while this process decodes page N; from the second page
on, in worker processes when there are cores for them (`PagePool`, forked before the fetch threads start):
a worker decodes a page's items and sends them back packed as load/parallel.py's workers send a range of a
file (load/wire.py), and the decoding thread unpacks them in page order. A worker that cannot decode a
page (an item of an unusual type, one orjson refuses) answers so, and the thread decodes that page itself.

What a compact record gives build_snapshot is exactly what the per-object path makes of the same item
(tests/test_compact_pods.py, tests/test_live_pods.py). A record does not keep its item's bytes (that would
hold the whole list, ~1 GB, in memory): nothing on the live path reads a bound pod's object back, and the
one thing that would (two items with one key, which a consistent paginated List never has) is refused as
a broken answer. A page in any other shape (items not a list, an item that is not an object, JSON orjson
refuses) is decoded the ordinary way, which reports exactly what it always did.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import msgspec
import orjson
from msgspec import Raw, Struct

from kdiagnose.load.apireader import ApiBodyError, ApiReader, json_object, list_item, list_items
from kdiagnose.load.compact import BatchSource, TemplateTable
from kdiagnose.load.kinds import KindSpec
from kdiagnose.load.order import meta_key
from kdiagnose.load.raw import RawObject
from kdiagnose.load.stream_json import decode_items

__all__ = ["PagePool", "list_pods", "start_pool"]

Obj = dict[str, Any]

# Pages decoded ahead of the one being fetched: each waiting page holds its body (a few MB).
_AHEAD = 2
_SESSIONS = itertools.count()


class _Shell(Struct):
    """A List answer with its items left undecoded."""

    metadata: Any = None
    items: Raw = Raw(b"null")


_SHELL = msgspec.json.Decoder(_Shell)


class _Whole(Exception):
    """An item orjson refuses: the page is decoded the ordinary way, which names the error."""


class PagePool:
    """Decoding processes for the Pod list's pages. Forked before any thread of the fetch exists (a fork
    copies only the thread that calls it, so no lock another thread holds is copied taken): the first
    submit of a fork-context executor forks every worker at once, before it returns (CPython's
    concurrent/futures/process.py, `_start_executor_manager_thread`), and never forks again. Its answer is
    not waited for: the workers start up while the fetch connects. Forking costs ~15 ms on every live
    read with two cores or more, small or not: which read spans several pages is known only once its
    threads run, too late to fork."""

    def __init__(self, n: int) -> None:
        from concurrent.futures import ProcessPoolExecutor

        from kdiagnose.load.wire import fork_context

        self.n = n
        self.pool = ProcessPoolExecutor(n, mp_context=fork_context())
        self.pool.submit(int)

    def close(self) -> None:
        # Waited for: an executor left shutting down races CPython's exit hook (concurrent/futures/process.py
        # `_python_exit` wakes its manager thread through a pipe that thread is closing), which printed a
        # traceback after the one-line error of a read that failed at once (an RBAC denial, in the e2e
        # tests). Pending pages are cancelled; a worker finishes at most the page it is decoding.
        self.pool.shutdown(wait=True, cancel_futures=True)


def start_pool() -> PagePool | None:
    """Worker processes for a live read, or None: one core (`--jobs 1`, KDIAGNOSE_JOBS=1) or no workers."""
    from concurrent.futures.process import BrokenProcessPool

    from kdiagnose.load.parallel import jobs

    n = jobs()
    if n <= 1:
        return None
    try:
        return PagePool(n)
    except (OSError, BrokenProcessPool):
        return None  # no processes here (limits, sandbox): the pages are decoded in this process


def list_pods(
    reader: ApiReader,
    spec: KindSpec,
    namespace: str | None,
    *,
    field_selector: str = "",
    transform: Callable[[Obj], Obj],
    pool: PagePool | None = None,
) -> list[RawObject]:
    """Every pod of a paginated LIST as RawObjects: bound pods as compact records, the others `transform`ed
    dicts. Errors are the list reader's (load/apireader.py ApiReader.list). `transform` is trim_pod unless
    no `pool` is given."""
    from concurrent.futures.process import BrokenProcessPool

    from kdiagnose.load.wire import Received, unpack

    source = f"context {reader.target.context}"
    typed = (spec.kind, spec.group_version)
    # Records built from a live page keep no bytes to decode their item again from (see the module text).
    where = BatchSource(None, None, 0, 0, typed)
    table = TemplateTable()
    received: dict[int, Received] = {}
    session = f"live-{os.getpid()}-{next(_SESSIONS)}"
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kdiagnose-decode")
    pending: list[Future[list[RawObject]]] = []
    ahead = _AHEAD if pool is None else 2 * pool.n + 1
    broken = False

    def ordinary(data: bytes, path: str) -> list[RawObject]:
        return [RawObject(transform(o), source) for o in list_items(json_object(data, path), spec, path)]

    def items_of(data: bytes, items: Raw, path: str) -> list[RawObject]:
        try:
            got = decode_items(items, source, table, typed, where, _per_object(spec, path, transform))
        except _Whole:
            got = None
        return ordinary(data, path) if got is None else got

    def unpacked(data: bytes, items: Raw, path: str, fut: Future[Any]) -> list[RawObject]:
        nonlocal broken
        try:
            got = fut.result()
        except BrokenProcessPool:
            broken = True  # a worker died (killed, out of memory): this process decodes the rest
            got = None
        if not isinstance(got, bytes):
            return items_of(data, items, path)
        return unpack(got, source, table, None, typed, received)[0]

    def page(data: bytes, path: str) -> tuple[Future[list[RawObject]], Any]:
        shell: _Shell | None
        try:
            shell = _SHELL.decode(data)
        except (msgspec.DecodeError, RecursionError):
            shell = None
        fut: Future[list[RawObject]] = Future()
        if shell is None or bytes(memoryview(shell.items)[:1]) != b"[":
            # Not an object, not JSON, items null or not a list: the ordinary reader's answer and errors.
            fut.set_result(ordinary(data, path))
            return fut, shell.metadata if shell is not None else None
        if len(pending) >= ahead:
            pending[-ahead].result()  # bounded: the decoders keep up, or the fetch waits for them
        if pool is not None and pending and not broken:
            # Past the first page (a list of one page never starts the workers' work).
            try:
                proc = pool.pool.submit(_decode_page, (bytes(shell.items), source, spec.kind, path, session))
            except BrokenProcessPool:
                proc = None
            if proc is not None:
                fut = worker.submit(unpacked, data, shell.items, path, proc)
                pending.append(fut)
                return fut, shell.metadata
        fut = worker.submit(items_of, data, shell.items, path)
        pending.append(fut)
        return fut, shell.metadata

    try:
        futures = reader.pages(spec, namespace, page, field_selector=field_selector)
        out: list[RawObject] = []
        for f in futures:
            out.extend(f.result())
    finally:
        worker.shutdown(wait=True, cancel_futures=True)
    _refuse_duplicates(out, spec.path(namespace))
    return out


def _per_object(spec: KindSpec, path: str, transform: Callable[[Obj], Obj]) -> Callable[[Raw], Obj]:
    """How a page's item that is not a compact record is made: as the ordinary list reader makes it."""

    def make(raw: Raw) -> Obj:
        try:
            it = orjson.loads(memoryview(raw))
        except orjson.JSONDecodeError:
            raise _Whole from None
        return transform(list_item(it, spec, path))

    return make


_WORKER_TABLE: TemplateTable | None = None


def _decode_page(args: tuple[bytes, str, str, str, str]) -> bytes | str:
    """In a PagePool worker: a page's items decoded and packed for the parent (load/wire.py pack_part);
    "serial" when the parent should decode the page itself. The worker's table validates and models each
    spec (not deferred as a file's workers do): a record is made only of a spec that passes, as in the
    parent, so no record ever needs its object back."""
    from kdiagnose.load.gcpause import without_gc
    from kdiagnose.load.kinds import KINDS
    from kdiagnose.load.trim import trim_pod
    from kdiagnose.load.wire import pack_part

    global _WORKER_TABLE
    items, source, kind, path, session = args
    spec = KINDS[kind]
    if _WORKER_TABLE is None:
        _WORKER_TABLE = TemplateTable()
    typed = (spec.kind, spec.group_version)
    where = BatchSource(None, None, 0, 0, typed)
    with without_gc():
        try:
            got = decode_items(
                Raw(items), source, _WORKER_TABLE, typed, where, _per_object(spec, path, trim_pod)
            )
        except (_Whole, ApiBodyError):
            got = None
        if got is None:
            return "serial"
        packed = pack_part(got, session)  # None: an integer past 64 bits; the parent decodes this page
        return "serial" if packed is None else packed


def _refuse_duplicates(objects: list[RawObject], path: str) -> None:
    """One key twice in one List: a consistent paginated answer never has that, and a compact record cannot
    be read back to choose between the two (load/order.py breaks such ties on the objects' content)."""
    keys = [meta_key(r.meta, True) if (k := r.compact_key) is None else k for r in objects]
    if len(set(keys)) == len(keys):
        return
    seen: set[str] = set()
    for k in keys:
        if k in seen:
            raise ApiBodyError(path, f"LIST {path}: the server sent pod {k} twice")
        seen.add(k)
