"""Stream a `kubectl get ... -o json` List from disk instead of decoding the whole file at once.

kubectl (and `json.dump(indent=4)`) write a List with a fixed layout: the top-level keys at 4 spaces and each
item opening `{` at 8 spaces, so items are separated by exactly b"\\n        },\\n        {" (JSON strings
cannot hold a raw newline, so that byte sequence is structural). The file is read in blocks; each block is
cut after its last complete item (one `rfind`, which scans only the tail), and the items of the block are
decoded in one msgspec call into small typed structs that keep only what kube-scheduler reads from a bound
Pod (msgspec skips the other fields in C without building them). Nodes, pending pods and other kinds are
decoded whole. A 1.4 GB, 150,000-pod dump then never exists in memory as a whole: neither as bytes nor as
the ~4 GB of dicts a whole-file decode builds.

Anything else (another layout, an item that fails to decode, an empty List, typed Lists whose items lack
`kind`) makes `load_json_list` return False with the LoadResult untouched, and files.py decodes the file
the ordinary way, which also produces the precise error message.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
from msgspec import UNSET

from kdiagnose.load.compact import (
    _ITEM,
    BatchSource,
    BoundPod,
    FastItem,
    RawItem,
    RawSpec,
    TemplateTable,
    bound_pod_or_none,
    fast_bound_pod,
    file_stamp,
    slim_pod,
    source_path,
)
from kdiagnose.load.gcpause import without_gc
from kdiagnose.load.limits import LimitError, check_value
from kdiagnose.load.raw import LoadResult, RawObject, record_list
from kdiagnose.load.trim import trim_object

__all__ = ["BLOCK_SIZE", "decode_items", "decode_range", "load_json_list"]

Obj = dict[str, Any]

BLOCK_SIZE = 32 << 20
_ITEMS = b'\n    "items": [\n        {'
_SEP = b"\n        },\n        {"
_END = b"\n        }\n    ]"
_CLOSE = len(b"\n        }")  # the separator's part that belongs to the item before it


class _Fallback(Exception):
    """The file is not in the layout this module reads: decode it the ordinary way."""


class _Serial(Exception):
    """A worker met an item of an unexpected type: the whole file takes the one-process path, whose batches
    decide how such items are read (load/parallel.py)."""


_FAST = msgspec.json.Decoder(list[FastItem])
_SLIM = msgspec.json.Decoder(list[RawItem])
_RAW_ITEM = msgspec.json.Decoder(RawItem)
_RAW = msgspec.json.Decoder(list[msgspec.Raw])
_ANY = msgspec.json.Decoder()


def _full(raw: msgspec.Raw, typed: tuple[str, str] | None = None) -> Obj:
    obj = check_value(_ANY.decode(raw), lambda: "JSON item", keys=False)
    if not isinstance(obj, dict):
        raise _Fallback
    if typed is not None and "kind" not in obj:
        # A typed List (PodList, as `kubectl cluster-info dump` writes them): items take the List's kind.
        obj = {"kind": typed[0], "apiVersion": typed[1], **obj}
    kind = obj.get("kind")
    if kind == "Node" or (
        kind == "Pod" and isinstance(obj.get("spec"), dict) and obj["spec"].get("nodeName")
    ):
        return trim_object(obj)
    return obj  # pending pods stay whole: remedies patch them and reports show them


def _bound_pod(item: RawItem | FastItem) -> bool:
    return (
        item.kind == "Pod"
        and isinstance(item.spec, RawSpec)
        and isinstance(item.spec.nodeName, str)
        and bool(item.spec.nodeName)
    )


def _decode_batch(
    batch: memoryview,
    source: str,
    table: TemplateTable,
    typed: tuple[str, str] | None = None,
    strict: bool = False,
    where: BatchSource | None = None,
    per_object: Callable[[msgspec.Raw], Obj] | None = None,
) -> list[RawObject]:
    """The objects of `[item, item, ...]`: bound pods as compact records (load/compact.py), the rest whole
    (nodes trimmed). `typed` is (kind, apiVersion) of a typed List's items, which carry neither; `where`
    the batch's place in its input (compact records decode their item again from it); `per_object` how an
    item that is not a compact record is decoded (the live reader's own per-object form), instead."""
    if where is None:
        where = BatchSource(None, bytes(batch[1:-1]), 0, len(batch) - 2, typed)
    items: Sequence[FastItem | RawItem]
    rec: BoundPod | bool | None
    try:
        items = _FAST.decode(batch)
        fast = True
    except msgspec.ValidationError:
        # Metadata or status of a less usual type (a label that is a number, ...): the general form.
        fast = False
        try:
            items = _SLIM.decode(batch)
        except msgspec.ValidationError:
            if strict:
                raise _Serial from None
            if per_object is not None:
                try:
                    whole = _RAW.decode(batch)
                except msgspec.DecodeError:
                    raise _Fallback from None
                return [RawObject(per_object(r), source) for r in whole]
            # Some item has a field of an unexpected type: decode the batch whole (the model reports it). Any
            # error of that decode (a number out of range, nesting) is files.py's to report, with its line.
            try:
                return [RawObject(_checked(_full(r, typed)), source) for r in _RAW.decode(batch)]
            except (msgspec.DecodeError, RecursionError, ValueError, LimitError):
                raise _Fallback from None
        except (msgspec.DecodeError, RecursionError):
            raise _Fallback from None
    except (msgspec.DecodeError, RecursionError):
        raise _Fallback from None
    if typed is not None:
        for each in items:
            if each.kind is UNSET:
                each.kind, each.apiVersion = typed
    raws: list[msgspec.Raw] | None = None
    out: list[RawObject] = []
    for i in range(len(items)):
        item: FastItem | RawItem = items[i]
        bound = _bound_pod(item)
        if bound:
            if fast:
                assert isinstance(item, FastItem)
                rec = fast_bound_pod(item, table, where, i)
                if rec is True:
                    # The general way, from the RawItem form of this one item.
                    if raws is None:
                        raws = _RAW.decode(batch)
                    try:
                        slim = _RAW_ITEM.decode(raws[i])
                    except msgspec.ValidationError:
                        slim = None
                    if slim is not None and typed is not None and slim.kind is UNSET:
                        slim.kind, slim.apiVersion = typed
                    rec = None if slim is None else bound_pod_or_none(slim, table, where, i)
            else:
                assert isinstance(item, RawItem)
                rec = bound_pod_or_none(item, table, where, i)
            if isinstance(rec, BoundPod):
                out.append(RawObject(None, source, compact=rec))
                continue
        if raws is None:
            raws = _RAW.decode(batch)
        if per_object is not None:
            out.append(RawObject(per_object(raws[i]), source))
            continue
        try:
            if bound:
                # A bound pod of an unusual shape (no status, volumes not a list of mappings) or that fails
                # a check: the per-object form, from the same fields.
                full = _ITEM.decode(raws[i])
                full.kind, full.apiVersion = item.kind, item.apiVersion
                out.append(RawObject(slim_pod(full), source))
            else:
                out.append(RawObject(_checked(_full(raws[i], typed)), source))
        except (msgspec.DecodeError, RecursionError, ValueError, LimitError):
            raise _Fallback from None
    return out


def decode_items(
    items: msgspec.Raw,
    source: str,
    table: TemplateTable,
    typed: tuple[str, str],
    where: BatchSource,
    per_object: Callable[[msgspec.Raw], Obj],
) -> list[RawObject] | None:
    """The items of one JSON array (a live List page's `items`, load/apireader.py): bound pods as compact
    records, every other item as `per_object` makes it; None when the array is not one this decodes (the
    caller then decodes it the ordinary way, which also names what is wrong)."""
    try:
        return _decode_batch(memoryview(items), source, table, typed, False, where, per_object)
    except _Fallback:
        return None


def _checked(obj: Obj) -> Obj:
    if "kind" not in obj:
        raise _Fallback  # a typed List (PodList) whose items take their kind from the List
    return obj


def _batch(
    buf: bytearray,
    start: int,
    end: int,
    source: str,
    table: TemplateTable,
    typed: tuple[str, str] | None = None,
    strict: bool = False,
    origin: _Origin | None = None,
    base: int = 0,
) -> list[RawObject]:
    """Decode the items in buf[start:end] (start is a `{`, with a byte before it; end is just after a `}`);
    `base` is the input offset of buf[0] in `origin`.

    The bytes around the items are overwritten with `[` and `]` so the block is decoded in place as one
    JSON array, without copying it (a copy of 32 MB costs as much as decoding a tenth of it here)."""
    where = None
    if origin is not None:
        where = BatchSource(origin[0], origin[1], base + start, base + end, typed, origin[2])
    buf[start - 1] = 0x5B  # [
    buf[end] = 0x5D  # ]
    # The view dies with this call (the decoded objects copy their strings), so `buf` can grow again after.
    return _decode_batch(memoryview(buf)[start - 1 : end + 1], source, table, typed, strict, where)


# Where a stream's bytes can be read again (compact.BatchSource): a file's path and (size, mtime), or an
# in-memory input's bytes.
_Origin = tuple[str | None, bytes | None, tuple[int, int] | None]


def _origin(f: BinaryIO) -> _Origin | None:
    getvalue = getattr(f, "getvalue", None)
    if callable(getvalue):
        data = getvalue()
        return (None, data, None) if isinstance(data, bytes) else None
    path = source_path(f)
    if path is None:
        return None
    try:
        return path, None, file_stamp(path)
    except OSError:
        return None


_TYPED_KIND = re.compile(rb'^    "kind": "([A-Za-z]+)List",?$', re.M)
_API_VERSION = re.compile(rb'^    "apiVersion": "([^"]+)",?$', re.M)


def _typed_list(header: bytes) -> tuple[str, str] | None:
    """(item kind, apiVersion) when the List before `items` is typed (`"kind": "PodList"`), else None.
    `kubectl get` Lists print their keys sorted, so their `kind` comes after the items: those are untyped."""
    m = _TYPED_KIND.search(header)
    if m is None:
        return None
    api = _API_VERSION.search(header)
    return m.group(1).decode(), (api.group(1).decode() if api else "v1")


def _header(buf: bytearray) -> tuple[bytes, int]:
    """(the List before its items, the offset of the first item's `{`), or _Fallback."""
    at = buf.find(_ITEMS, 0, 1 << 16)
    if at < 0 or buf[: buf.find(b'"')].strip() != b"{":
        raise _Fallback
    return bytes(buf[:at]), at + len(_ITEMS) - 1


def _shell(header: bytes, trailer: bytes) -> Obj:
    try:
        shell = msgspec.json.decode(header + b'\n    "items": []' + trailer)
    except msgspec.DecodeError:
        raise _Fallback from None
    if not isinstance(shell, dict):
        raise _Fallback
    return shell


class _Window:
    """A window over a stream: `buf[:n]` holds the input from offset `base` on. `advance` keeps the bytes
    from `keep` on (moved to the front: a partial item, small) and reads the next block after them into
    the same buffer. Reading into one reused buffer instead of a new 32 MB bytes object per block (and
    growing and shrinking a bytearray around it) halves the load's system time: fresh memory is page-faulted
    in on every block otherwise."""

    __slots__ = ("base", "buf", "f", "n")

    def __init__(self, f: BinaryIO, base: int, spare: list[bytearray] | None = None) -> None:
        self.f = f
        self.base = base
        # `spare`: a buffer a window before this one is done with (decode_range's, in a worker that decodes
        # several ranges). bytearray(64 MB) zero-fills and page-faults in all of it: 5% of a worker's CPU
        # when every range took a new one. One still viewed by a decoded object is not taken.
        buf = spare.pop() if spare else None
        if buf is not None:
            try:
                buf.append(0)
                del buf[-1]
            except BufferError:
                buf = None
        self.buf = buf if buf is not None else bytearray(2 * BLOCK_SIZE)
        self.n = 0
        self._read()

    def _read(self) -> int:
        buf = self.buf
        if len(buf) < self.n + BLOCK_SIZE:
            buf.extend(bytes(self.n + BLOCK_SIZE - len(buf)))  # an item longer than a block
        with memoryview(buf) as view:
            got = self.f.readinto(view[self.n : self.n + BLOCK_SIZE])  # type: ignore[attr-defined]
        self.n += got or 0
        return int(got or 0)

    def advance(self, keep: int) -> int:
        """Drop buf[:keep], read the next block; the number of bytes read (0 at the end of the input)."""
        buf = self.buf
        try:
            # A view of the buffer still alive (a decoded object not yet freed) would see its bytes change:
            # resizing is refused while one is, so try one and take a new buffer if it is.
            buf.append(0)
            del buf[-1]
        except BufferError:
            self.buf = buf = bytearray(buf)
        tail = self.n - keep
        if keep:
            buf[:tail] = buf[keep : self.n]
        self.base += keep
        self.n = tail
        return self._read()


def _stream(f: BinaryIO, source: str) -> tuple[list[RawObject], Obj]:
    """(objects, the List without its items) of a kubectl-layout JSON List, or _Fallback."""
    origin = _origin(f)
    w = _Window(f, f.tell())
    header, pos = _header(w.buf[: min(w.n, 1 << 16)])
    typed = _typed_list(header)
    objects: list[RawObject] = []
    table = TemplateTable()
    while True:
        buf = w.buf
        cut = buf.rfind(_SEP, pos, w.n)
        if cut >= 0:
            objects.extend(_batch(buf, pos, cut + _CLOSE, source, table, typed, False, origin, w.base))
            pos = cut + len(_SEP) - 1
        # Keep one byte before the next item's `{`: _batch writes the `[` there.
        if not w.advance(pos - 1):
            buf = w.buf
            end = buf.find(_END, 1, w.n)
            if end < 0:
                raise _Fallback
            trailer = bytes(buf[end + len(_END) : w.n])
            objects.extend(_batch(buf, 1, end + _CLOSE, source, table, typed, False, origin, w.base))
            break
        pos = 1
    return objects, _shell(header, trailer)


def decode_range(
    f: BinaryIO,
    source: str,
    typed: tuple[str, str] | None,
    lo: int,
    hi: int,
    first: bool,
    table: TemplateTable | None = None,
    spare: list[bytearray] | None = None,
) -> tuple[list[RawObject], int | None]:
    """The items whose `{` lies in file offsets [lo, hi) and, if this range reached the end of the items,
    the offset of the List's closing part (load/parallel.py splits a file into such ranges). `first`: lo is
    the first item's `{`. The ranges of one file partition its items: an item belongs to the range its
    opening brace is in, and a range ends at the first separator whose `{` is at or past hi. `spare`: a pool
    of window buffers kept across the calls of one process (the buffer is put back when the range is
    decoded, also when it ends in _Fallback)."""
    w: _Window | None = None
    try:
        width = len(_SEP) - 1  # a separator's bytes before the next item's `{`
        table = table if table is not None else TemplateTable()
        origin = _origin(f)
        if first:
            f.seek(lo - 1)
            w = _Window(f, lo - 1, spare)
            pos = 1
        else:
            f.seek(lo - width)
            w = _Window(f, lo - width, spare)
            while (k := w.buf.find(_SEP, 0, w.n)) < 0:
                if not w.advance(max(0, w.n - width)):
                    return [], None  # no item starts here: the range before reads up to the end
            pos = k + width
            if w.base + pos >= hi:
                return [], None
        objects: list[RawObject] = []
        while True:
            buf = w.buf
            k = buf.find(_SEP, max(pos, hi - w.base - width), w.n)
            if k >= 0:
                objects.extend(_batch(buf, pos, k + _CLOSE, source, table, typed, True, origin, w.base))
                return objects, None
            cut = buf.rfind(_SEP, pos, w.n)
            if cut >= 0:
                objects.extend(_batch(buf, pos, cut + _CLOSE, source, table, typed, True, origin, w.base))
                pos = cut + width
            if not w.advance(pos - 1):
                buf = w.buf
                end = buf.find(_END, 1, w.n)
                if end < 0:
                    raise _Fallback
                objects.extend(_batch(buf, 1, end + _CLOSE, source, table, typed, True, origin, w.base))
                return objects, w.base + end + len(_END)
            pos = 1
    finally:
        if spare is not None and w is not None and len(w.buf) == 2 * BLOCK_SIZE:
            spare.append(w.buf)


def load_json_list(path: Path | BinaryIO, source: str, result: LoadResult) -> bool:
    """Load a kubectl-layout JSON List file into `result`; False (and `result` untouched) for any other file."""
    try:
        with path.open("rb") if isinstance(path, Path) else path as f, without_gc():
            objects, shell = _stream(f, source)
    except (_Fallback, OSError):
        return False
    return record_list(result, source, objects, shell)
