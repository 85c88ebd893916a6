"""Stream a `kubectl get ... -o yaml` List from disk in batches of items, never the whole document at once.

kubectl (sigs.k8s.io/yaml) and PyYAML write a List's items as an unindented block sequence under `items:` at
column 0: every item starts with `- ` at column 0 and every other line of it is indented. A line at column 0
that is neither `- ...`, indentation nor a comment (`kind: List`, `metadata:`, `---`) ends the sequence. The
file is read in blocks; each block is cut before its last item start and the complete items are parsed as
one small YAML sequence by files.py's own YAML decoder (yaml-rs, PyYAML as the fallback, with the same
boolean/timestamp/merge-key/duplicate-key rules), so a 400 MB dump costs a batch of dicts at a time and
bound Pods and Nodes are trimmed as they arrive. A big List file's batches are parsed in worker processes
(`_Batches`: the parse and its checks are most of a YAML load), the objects sent back in batch order.

Any other layout, or a batch that fails to parse (anchors shared across items, tabs, a syntax error), makes
`load_yaml_list` return False with the LoadResult untouched: files.py then reads the file whole and
reports the error with its line.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import deque
from concurrent.futures import Future
from pathlib import Path
from typing import Any, BinaryIO

from msgspec import Raw

from kdiagnose.errors import InputError
from kdiagnose.load.compact import BatchSource, TemplateTable, file_stamp
from kdiagnose.load.gcpause import without_gc
from kdiagnose.load.limits import MAX_SHAPELESS_DOCS, LimitError
from kdiagnose.load.parse import _decode_yaml
from kdiagnose.load.raw import LoadResult, RawObject, record_list, where
from kdiagnose.load.trim import trim_object
from kdiagnose.load.wire import Received

__all__ = ["BLOCK_SIZE", "load_yaml_list"]

_SESSIONS = itertools.count()  # one per parallel load: the workers' Sent tables belong to it (load/wire.py)

Obj = dict[str, Any]

BLOCK_SIZE = 8 << 20
_ITEMS = re.compile(rb"(?m)^items:[ \t]*\r?\n(?=-[ \r\n])")
# A line that leaves the item sequence: not indented, not a comment, not `- ` / `-` (a new item), not blank.
# (A lookahead that needs the next character, so the end of a block is never mistaken for it.)
_OUTSIDE = re.compile(rb"\n(?=[^ \t\r\n#-]|-[^ \r\n])")
_ITEM_START = b"\n- "
# A file that is itself a block sequence (`- kind: Pod ...`), after comments and an optional `---`.
_TOP_SEQUENCE = re.compile(rb"\A(?:[ \t]*(?:#[^\n]*)?\r?\n)*(?:---[ \t]*\r?\n)?(?=-[ \r\n])")


class _Fallback(Exception):
    """Not the layout this module reads, or a batch it cannot parse alone."""


def _keep(obj: Any) -> Obj:
    if not isinstance(obj, dict) or "kind" not in obj:
        raise _Fallback  # a typed List whose items take their kind from the List: let files.py do it
    kind = obj.get("kind")
    spec = obj.get("spec")
    if kind == "Node" or (kind == "Pod" and isinstance(spec, dict) and spec.get("nodeName")):
        return trim_object(obj)
    return obj  # pending pods and other kinds stay whole


def _parse(data: bytes, source: str, string_keys: bool = True) -> list[Any]:
    try:
        docs, _ = _decode_yaml(data.decode("utf-8"), source, string_keys=string_keys)
    except (InputError, UnicodeDecodeError):
        raise _Fallback from None
    return docs


class _TopLevel:
    """Items of a file that is one top-level sequence: checked as they stream (no Kubernetes shape: error)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.shapeless = 0

    def keep(self, item: Any) -> Obj | None:
        if isinstance(item, dict) and isinstance(item.get("kind"), str):
            return _keep(item)
        if item is not None and not isinstance(item, dict):
            raise InputError(f"{where(self.source, 0)}: list item is not a Kubernetes object")
        self.shapeless += 1
        if self.shapeless > MAX_SHAPELESS_DOCS:
            raise LimitError(
                f"{self.source}: more than {MAX_SHAPELESS_DOCS} list items that are empty or have no kind: "
                "not Kubernetes objects"
            )
        return None


def _batch(data: bytes, source: str, top: _TopLevel | None = None) -> list[RawObject]:
    docs = _parse(data, source)
    if len(docs) != 1 or not isinstance(docs[0], list):
        raise _Fallback
    if top is None:
        return [RawObject(_keep(item), source) for item in docs[0]]
    return [RawObject(o, source) for o in map(top.keep, docs[0]) if o is not None]


def _stream(
    f: BinaryIO, source: str, workers: int = 1, path: str | None = None
) -> tuple[list[RawObject], Obj | None]:
    """(objects, the List without its items) of a kubectl-layout List, or (objects, None) of a file that
    is one top-level sequence. `workers` > 1: a List's batches are parsed in that many processes (`path`:
    the file, which their compact records decode again from)."""
    buf = f.read(BLOCK_SIZE)
    top: _TopLevel | None = None
    if buf.startswith(b"\xef\xbb\xbf"):
        raise _Fallback
    m = _ITEMS.search(buf, 0, 1 << 16)
    if m is None:
        m = _TOP_SEQUENCE.match(buf, 0, 1 << 16)
        if m is None:
            raise _Fallback
        top = _TopLevel(source)
    header = buf[: m.start()]
    buf = b"\n" + buf[m.end() :]  # a leading newline: item starts and the end are then all b"\n..."
    pos = 1
    scanned = 0
    sink = _Batches(source, top, workers if top is None else 1, path)
    try:
        trailer = _cut(f, buf, pos, scanned, sink, m.end() - 1)
        objects = sink.finish()
    finally:
        sink.close()
    if top is not None:
        if any(d is not None for d in _parse(trailer, source)):
            raise _Fallback  # more after the sequence: a syntax error files.py reports with its line
        return objects, None
    shell = _parse(header + trailer, source)
    if len(shell) != 1 or not isinstance(shell[0], dict):
        raise _Fallback
    return objects, shell[0]


def _cut(f: BinaryIO, buf: bytes, pos: int, scanned: int, sink: _Batches, base: int) -> bytes:
    """Hand the items' text to `sink` in batches of whole items, read a block at a time; the text after
    the item sequence (the List's other fields). `base`: the file offset of buf[0] (each batch's offset
    goes with it)."""
    eof = False
    while True:
        end = _OUTSIDE.search(buf, scanned)
        if end is not None:
            sink.add(buf[pos : end.start() + 1], base + pos)
            return buf[end.start() + 1 :] + f.read()
        if eof:
            sink.add(buf[pos:], base + pos)
            return b""
        scanned = max(len(buf) - 3, pos)  # the pattern reads up to two bytes past a newline
        cut = buf.rfind(_ITEM_START, pos)
        if cut > pos:
            sink.add(buf[pos : cut + 1], base + pos)
            pos = cut + 1
        more = f.read(BLOCK_SIZE)
        eof = not more
        buf = buf[pos - 1 :] + more
        base += pos - 1
        scanned -= pos - 1
        pos = 1


class _Batches:
    """The batches of a stream, parsed here in order, or (`workers` > 1) in worker processes while the
    next blocks are read and cut: a worker parses a batch as `_batch` does here and sends its objects back
    packed (load/wire.py, as load/parallel.py's workers send a range of a JSON file), this process unpacks
    them in batch order. A batch a worker cannot pack (an integer past 64 bits) is parsed here; one it
    cannot parse alone makes the whole file take files.py's path (`_Fallback`), as in one process."""

    def __init__(self, source: str, top: _TopLevel | None, workers: int, path: str | None = None) -> None:
        self.source = source
        self.top = top
        self.path = path
        # A file's bound pods become compact records (`_compact`), here or in the workers; a stream's (stdin)
        # stay dicts: a record must be able to read its item again.
        self.stamp = file_stamp(path) if path is not None and top is None else None
        self.objects: list[RawObject] = []
        self.pool: Any = None
        self.ahead: deque[tuple[bytes, int, Future[bytes | str]]] = deque()
        # What the workers sent in earlier batches of this load (load/wire.py Sent/Received).
        self.session = f"yaml-{os.getpid()}-{next(_SESSIONS)}"
        self.table = TemplateTable()
        self.received: dict[int, Received] = {}
        self.limit = 2 * workers + 1  # batches in flight: each holds its text (a block) and its result
        if workers > 1:
            from concurrent.futures import ProcessPoolExecutor

            from kdiagnose.load.wire import fork_context

            try:
                self.pool = ProcessPoolExecutor(workers, mp_context=fork_context())
            except OSError:
                self.pool = None  # no processes here (limits, sandbox): every batch is parsed here

    def add(self, data: bytes, lo: int = 0) -> None:
        if self.pool is None:
            self.objects.extend(self._here(data, lo))
            return
        from concurrent.futures.process import BrokenProcessPool

        try:
            fut = self.pool.submit(_work, (data, self.source, self.session, lo, self.stamp))
        except (BrokenProcessPool, RuntimeError):
            self._serial()
            self.objects.extend(self._here(data, lo))
            return
        self.ahead.append((data, lo, fut))
        while len(self.ahead) > self.limit:
            self._take()

    def _take(self) -> None:
        from concurrent.futures.process import BrokenProcessPool

        from kdiagnose.load.wire import unpack

        data, lo, fut = self.ahead.popleft()
        try:
            got = fut.result()
        except BrokenProcessPool:
            # A worker died (killed, out of memory): this batch and the rest are parsed here.
            self.ahead.appendleft((data, lo, fut))
            self._serial()
            return
        if got == "fallback":
            raise _Fallback
        if got == "serial":
            self.objects.extend(_batch(data, self.source, self.top))
            return
        assert isinstance(got, bytes)
        # The compact records decode their item again from the file (YamlBatchSource), as the JSON ones do.
        path = self.path if self.stamp is not None else None
        self.objects.extend(
            unpack(got, self.source, self.table, path, None, self.received, YamlBatchSource)[0]
        )

    def _here(self, data: bytes, lo: int) -> list[RawObject]:
        """A batch parsed in this process: as a worker parses it (`_work`), for the same objects."""
        if self.stamp is None or self.path is None:
            return _batch(data, self.source, self.top)

        try:
            return _compact(data, self.source, lo, self.stamp, self.path, self.table)
        except _not_compact():
            return _batch(data, self.source, self.top)

    def _serial(self) -> None:
        """The pool is gone: the batches in flight are parsed here, in order, and so are the next."""
        pending = [(data, lo) for data, lo, _ in self.ahead]
        self.ahead.clear()
        self.close()
        self.pool = None
        for data, lo in pending:
            self.objects.extend(self._here(data, lo))

    def finish(self) -> list[RawObject]:
        while self.ahead:
            self._take()
        return self.objects

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _work(args: tuple[bytes, str, str, int, tuple[int, int] | None]) -> bytes | str:
    """In a worker: one batch parsed as `_batch` parses it in the parent and packed for it; "fallback" when
    it does not parse alone (the whole file then takes files.py's path, which names the error), "serial"
    when it cannot be packed (the parent parses it itself).

    The bound pods go as compact records, as a JSON dump's do (load/compact.py: one model per distinct
    spec, a row of per-pod values; the parent no longer models, validates and admits 150,000 dicts): the
    batch's items, checked by the parse (depth, finite numbers; keys as `_compact` says), are written as
    one JSON array and decoded by the JSON stream's batch decoder, which gives the objects `_batch` gives
    (Nodes and bound pods trimmed, the others whole). An item JSON cannot carry as it is (an integer past
    64 bits, a lone surrogate), or one that decoder leaves to the general path, makes the parent parse the
    batch."""
    from kdiagnose.load.wire import pack_part

    data, source, session, lo, stamp = args
    with without_gc():
        try:
            objects = _batch(data, source) if stamp is None else _compact(data, source, lo, stamp)
        except _Fallback:
            return "fallback"
        except _not_compact():
            return "serial"  # orjson's error is a TypeError
        packed = pack_part(objects, session)
        return "serial" if packed is None else packed


def _not_compact() -> tuple[type[BaseException], ...]:
    """What `_compact` raises for a batch it cannot make compact records of (orjson's refusal is a
    TypeError; the JSON decoder's general path, its nesting bound): that batch takes `_batch`."""
    from kdiagnose.load import stream_json

    return (TypeError, stream_json._Fallback, stream_json._Serial, RecursionError, ValueError)


def _compact(
    data: bytes,
    source: str,
    lo: int,
    stamp: tuple[int, int],
    path: str | None = None,
    table: TemplateTable | None = None,
) -> list[RawObject]:
    """The batch's objects, its bound pods as compact records that decode their item again from `path`
    (a worker's records get their source in the parent, wire.unpack). `table`: this process's templates
    (a worker's own, deferred, by default)."""
    import orjson

    from kdiagnose.load import stream_json
    from kdiagnose.load.parallel import _worker_table

    # Keys are left as parsed: orjson refuses a key that is not a string (a TypeError), and then the batch
    # is parsed again with them made strings (check_value's key pass is a quarter of its time).
    docs = _parse(data, source, string_keys=False)
    if len(docs) != 1 or not isinstance(docs[0], list):
        raise _Fallback
    items = docs[0]
    if not all(isinstance(x, dict) and "kind" in x for x in items):
        raise _Fallback  # as _keep: a typed List, or an item that is no object, is files.py's to read
    try:
        text = orjson.dumps(items)
    except TypeError:
        docs = _parse(data, source)
        text = orjson.dumps(docs[0])  # what does not go now (an integer past 64 bits): the parent parses it
    where = YamlBatchSource(path, None, lo, lo + len(data), None, stamp)
    tables = table if table is not None else _worker_table()
    return stream_json._decode_batch(memoryview(text), source, tables, None, True, where)


class YamlBatchSource(BatchSource):
    """A YAML batch's place in its file, to decode one of its items again (BoundPod.to_obj): the batch is
    read and parsed again as the worker parsed it, and its items written as the same JSON array."""

    __slots__ = ()

    def items(self, body: bytes) -> list[Raw]:
        import msgspec
        import orjson

        docs = _parse(body, self.path or "")
        if len(docs) != 1 or not isinstance(docs[0], list):
            from kdiagnose.errors import InputError

            raise InputError(f"{self.path}: the file changed while kdiagnose was reading it")
        return msgspec.json.decode(orjson.dumps(docs[0]), type=list[Raw])


def load_yaml_list(path: Path | BinaryIO, source: str, result: LoadResult) -> bool:
    """Load a kubectl-layout YAML List file (or one top-level sequence) into `result`; False (and `result`
    untouched) otherwise. A List file of PARALLEL_MIN_BYTES or more is parsed in `jobs()` processes
    (load/parallel.py: `--jobs`, KDIAGNOSE_JOBS)."""
    from kdiagnose.load import parallel

    try:
        with path.open("rb") if isinstance(path, Path) else path as f, without_gc():
            workers = 1
            if isinstance(path, Path) and os.fstat(f.fileno()).st_size >= parallel.PARALLEL_MIN_BYTES:
                workers = parallel.jobs()
            where = os.path.abspath(path) if isinstance(path, Path) else None
            objects, shell = _stream(f, source, workers, where)
    except (_Fallback, OSError):
        return False
    if shell is None:
        if not objects:
            return False
        result.files.append(source)
        result.objects.extend(objects)
        return True
    return record_list(result, source, objects, shell)
