"""Decode a big kubectl JSON List in worker processes, one byte range each (issue #17).

The items of a kubectl-layout List are separated by a fixed byte sequence (stream_json.py), so the file can
be cut anywhere: each worker reads a range of offsets and decodes the items whose opening brace lies in it
(stream_json.decode_range), bound pods as compact records (load/compact.py). The parent concatenates the
ranges in file order, so the objects come out exactly as the one-process loader makes them (same items,
same order; templates of equal specs merged by key), which tests/test_parallel_load.py checks; the snapshot
is then built by the same code either way. Anything unusual in a range (an item of an unexpected type,
another layout) makes the whole file take the one-process path.

Workers: `--jobs N` or KDIAGNOSE_JOBS (default: the cores this process may run on); 1 means no worker.
Files below PARALLEL_MIN_BYTES are not worth the processes.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path
from sys import intern
from typing import Any, BinaryIO

import msgspec

from kdiagnose.load.compact import BatchSource, BoundPod, Template, TemplateTable, template_pod
from kdiagnose.load.raw import LoadResult, RawObject, record_list
from kdiagnose.model.objects import Node, Pod, pod_from_row

__all__ = [
    "JOBS_ENV",
    "PARALLEL_MIN_BYTES",
    "default_jobs",
    "jobs",
    "load_in_parallel",
    "load_json_list_parallel",
    "set_jobs",
]

Obj = dict[str, Any]

JOBS_ENV = "KDIAGNOSE_JOBS"
PARALLEL_MIN_BYTES = 64 << 20
# Ranges per worker: more than one, so the parent merges early ranges while the workers decode later ones.
RANGES_PER_WORKER = 4
MIN_RANGE_BYTES = 8 << 20

_jobs: int | None = None
_SESSIONS = itertools.count()


def default_jobs() -> int:
    """The cores this process may run on (taskset and cgroup cpusets count), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def set_jobs(n: int | None) -> None:
    """--jobs: the number of decoding processes (None: KDIAGNOSE_JOBS, else default_jobs())."""
    global _jobs
    _jobs = n


def jobs() -> int:
    if _jobs is not None:
        return max(1, _jobs)
    env = os.environ.get(JOBS_ENV, "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass  # the CLI validates the variable (commands/diagnose.py); a library caller gets the default
    return default_jobs()


def _context() -> Any:
    # fork shares the loaded modules (no re-import per worker); spawn where fork does not exist.
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods and sys.platform != "darwin" else "spawn")


_WORKER_TABLE: TemplateTable | None = None
# The window buffer of a worker's last range, for its next one (stream_json.decode_range).
_WORKER_SPARE: list[bytearray] = []


def _worker_table() -> TemplateTable:
    """One table per worker process, across its ranges: each spec is modelled once per worker."""
    global _WORKER_TABLE
    if _WORKER_TABLE is None:
        _WORKER_TABLE = TemplateTable(defer=True)
    return _WORKER_TABLE


def _work(args: tuple[str, str, tuple[str, str] | None, int, int, bool, str]) -> Any:
    from kdiagnose.load.gcpause import without_gc
    from kdiagnose.load.stream_json import _Fallback, _Serial, decode_range

    path, source, typed, lo, hi, first, session = args
    try:
        with open(path, "rb") as f, without_gc():
            objects, end = decode_range(f, source, typed, lo, hi, first, _worker_table(), _WORKER_SPARE)
            return _pack(objects, end, _sent(session))
    except (_Fallback, OSError):
        return "fallback"
    except (_Serial, msgspec.EncodeError, OverflowError, TypeError, ValueError):
        return "serial"


# Sent as msgpack (msgspec), not pickled: four times faster to write, and faster to read. The values are what
# the JSON decoder made (dicts with string keys, lists, strings, numbers, booleans, None), which msgpack
# carries unchanged; anything it cannot carry (an integer past 64 bits) sends the file down the
# one-process path. A compact record goes as its row (model.objects.Row) with the values many pods share
# (namespaces, node names, timestamps, label sets, owner references, conditions) sent once per range and
# referred to by index, so the parent only looks them up (and interns each distinct string once).
_PLAIN, _BOUND = 0, 1


class _Table:
    """Values by identity or key -> their index in the list sent."""

    __slots__ = ("index", "values")

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []

    def add(self, key: Any, value: Any) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.values)
            self.values.append(value)
        return i


_KEY = msgspec.json.Encoder()


class _Sent:
    """What a worker has sent the parent in its earlier ranges of one load (`session`): the shared values
    (spec keys, strings, label sets, owner references, conditions) go once per worker, not once per range.
    Each range sends only the values new since the last (the tail of each table) with the worker's pid,
    and the parent keeps one list per worker and table (_Received). Every value stays referenced by its
    table, so an id used as a key is never reused by another object while the load runs."""

    __slots__ = ("conds", "labels", "owners", "session", "strs", "templates")

    def __init__(self, session: str) -> None:
        self.session = session
        self.templates: _Table = _Table()
        self.strs: _Table = _Table()
        self.labels: _Table = _Table()
        self.owners: _Table = _Table()
        self.conds: _Table = _Table()

    def sizes(self) -> tuple[int, int, int, int, int]:
        return (
            len(self.templates.values),
            len(self.strs.values),
            len(self.labels.values),
            len(self.owners.values),
            len(self.conds.values),
        )

    def restore(self, sizes: tuple[int, int, int, int, int]) -> None:
        """Forget what a `_pack` that failed added (its values never reached the parent), so the indices of
        the next range sent still match the parent's lists (load/live_pods.py goes on after such a page)."""
        for table, n in zip(
            (self.templates, self.strs, self.labels, self.owners, self.conds), sizes, strict=True
        ):
            del table.values[n:]
            table.index = {k: i for k, i in table.index.items() if i < n}


_WORKER_SENT: _Sent | None = None


def _sent(session: str) -> _Sent:
    """This worker's _Sent for the load `session`: a new one for a new load (a forked worker may inherit
    another load's, which its parent never received)."""
    global _WORKER_SENT
    if _WORKER_SENT is None or _WORKER_SENT.session != session:
        _WORKER_SENT = _Sent(session)
    return _WORKER_SENT


def _pack(objects: list[RawObject], end: int | None, sent: _Sent) -> bytes:
    before = sent.sizes()
    templates = sent.templates
    sources: _Table = _Table()
    strs, labels, owners, conds = sent.strs, sent.labels, sent.owners, sent.conds
    rows: list[Any] = []
    for raw in objects:
        rec = raw.compact
        if isinstance(rec, BoundPod):
            t = templates.add(rec.template, rec.template)
            src = rec.source
            ns, name, uid, lab, own, ctime, dtime, node, phase, start, nominated, cond, resize, extra = (
                rec.row
            )
            rows.append(
                (
                    _BOUND,
                    t,
                    sources.add(id(src), (src.lo, src.hi)),
                    rec.index,
                    strs.add(ns, ns),
                    name,
                    uid,
                    labels.add(id(lab) if lab else 0, lab),
                    owners.add(id(own) if own else 0, own),
                    strs.add(ctime, ctime),
                    dtime,
                    strs.add(node, node),
                    strs.add(phase, phase),
                    strs.add(start, start),
                    nominated,
                    conds.add(_KEY.encode(cond), cond) if cond else -1,
                    resize,
                    extra,
                )
            )
        else:
            rows.append((_PLAIN, raw.obj, _valid(raw.obj)))
    stamp = next((r.compact.source.stamp for r in objects if isinstance(r.compact, BoundPod)), None)
    return msgspec.msgpack.encode(
        (
            end,
            os.getpid(),
            [t.key for t in templates.values[before[0] :]],
            sources.values,
            stamp,
            strs.values[before[1] :],
            labels.values[before[2] :],
            owners.values[before[3] :],
            conds.values[before[4] :],
            rows,
        )
    )


def _valid(obj: Obj) -> bool:
    """validate(obj) passes: checked here, in the worker, so that the parent skips it (its error, if any, is
    the parent's to report, with where the object is)."""
    from kdiagnose.load.raw import KNOWN_KINDS
    from kdiagnose.model.objects import ModelError
    from kdiagnose.model.validation import validate

    if obj.get("kind") not in KNOWN_KINDS:
        return False
    try:
        validate(obj)
    except (ModelError, TypeError, ValueError, AttributeError, KeyError, RecursionError):
        return False
    return True


def _extra(extra: list[Any]) -> tuple[Any, ...]:
    """Row's last value after msgpack (which makes every tuple a list)."""
    rcs, statuses, waiting = extra
    return rcs, {k: (v[0], v[1]) for k, v in statuses.items()}, tuple(tuple(w) for w in waiting)


class _Received:
    """One worker's shared values as received so far in this load (its _Sent, on the parent's side)."""

    __slots__ = ("conds", "labels", "models", "owners", "strs", "templates")

    def __init__(self) -> None:
        self.templates: list[Template] = []
        self.models: list[Pod | None] = []
        self.strs: list[str] = []
        self.labels: list[dict[str, str]] = []
        self.owners: list[Any] = []
        self.conds: list[Any] = []


def _unpack(
    data: bytes,
    source: str,
    table: TemplateTable,
    path: str | None,
    typed: tuple[str, str] | None,
    received: dict[int, _Received],
) -> tuple[list[RawObject], int | None]:
    """A range's objects from its worker's bytes (`path` None: a live page's, load/live_pods.py). `received`: per worker pid, what it sent in its earlier
    ranges of this load (each worker's ranges come in the order it decoded them: the tasks are handed out,
    and their results read, in file order)."""
    end, pid, keys, spans, stamp, new_strs, new_labels, new_owners, new_conds, rows = msgspec.msgpack.decode(
        data
    )
    got = received.get(pid)
    if got is None:
        got = received[pid] = _Received()
    new_templates = [table.get(k) for k in keys]
    got.templates += new_templates
    # Each new spec is validated, admitted and modelled here, while the workers decode the later ranges,
    # instead of in build_snapshot once they are done (_Compacts.valid finds it modelled): the same call
    # (template_pod, release-independent), earlier. Most specs come with the first range.
    got.models += [template_pod(t) for t in new_templates]
    got.strs += [intern(x) for x in new_strs]
    got.labels += [{intern(k): intern(v) for k, v in d.items()} for d in new_labels]
    got.owners += new_owners
    got.conds += new_conds
    templates, models, strs, labels, owners, conds = (
        got.templates,
        got.models,
        got.strs,
        got.labels,
        got.owners,
        got.conds,
    )
    if stamp is not None:
        stamp = (stamp[0], stamp[1])
    sources = [BatchSource(path, None, lo, hi, typed, stamp) for lo, hi in spans]
    out: list[RawObject] = []
    append = out.append
    for row in rows:
        if row[0] == _BOUND:
            _, t, src, index, ns, name, uid, lab, own, ctime, dtime, node, phase, start, nom, cond, rz, ex = (
                row
            )
            rec = BoundPod(
                (
                    strs[ns],
                    name,
                    uid,
                    labels[lab],
                    owners[own],
                    strs[ctime],
                    dtime,
                    strs[node],
                    strs[phase],
                    strs[start],
                    nom,
                    conds[cond] if cond >= 0 else [],
                    rz,
                    None if ex is None else _extra(ex),
                ),
                templates[t],
                sources[src],
                index,
            )
            model = models[t]
            if model is not None:
                # The Pod build_snapshot would make (its release template permitting, _Compacts.pod), made
                # now, while the workers decode the later ranges.
                rec.pre = pod_from_row(model, rec.row)
            append(RawObject(None, source, compact=rec))
        else:
            raw = RawObject(row[1], source, valid=row[2])
            if row[2] and row[1].get("kind") == "Node":
                # The Node build_snapshot would model (without keep_raw), modelled now, while the workers
                # decode the later ranges; if it fails, build_snapshot models it and reports the error.
                try:
                    raw.node = Node(row[1])
                except Exception:  # build_snapshot raises what it always raised
                    raw.node = None
            append(raw)
    return out, end


def load_json_list_parallel(path: Path, source: str, result: LoadResult) -> bool | None:
    """stream_json.load_json_list in worker processes: True (loaded into `result`), False (not a kubectl
    List: the ordinary path decodes it), None (load it in this process: one job, a small file, an item of
    an unexpected type)."""
    from kdiagnose.load.gcpause import without_gc
    from kdiagnose.load.stream_json import _Fallback

    try:
        with path.open("rb") as f, without_gc():
            got = load_in_parallel(path, f, source)
    except (_Fallback, OSError):
        return False
    if got is None:
        return None
    return record_list(result, source, *got)


def load_in_parallel(path: Path, f: BinaryIO, source: str) -> tuple[list[RawObject], Obj] | None:
    """(objects, the List without its items), or None to load the file in this process. Raises
    stream_json._Fallback when the file is not a kubectl-layout List."""
    from kdiagnose.load.stream_json import BLOCK_SIZE, _Fallback, _header, _shell, _typed_list

    n = jobs()
    try:
        size = os.fstat(f.fileno()).st_size
    except (OSError, ValueError, AttributeError):
        return None
    if n <= 1 or size < PARALLEL_MIN_BYTES:
        return None
    f.seek(0)
    header, first_item = _header(bytearray(f.read(min(BLOCK_SIZE, 1 << 16))))
    typed = _typed_list(header)
    span = size - first_item
    count = max(1, min(n * RANGES_PER_WORKER, span // MIN_RANGE_BYTES))
    bounds = [first_item + span * i // count for i in range(count)] + [size]
    # The workers' _Sent tables belong to this load alone.
    session = f"{os.getpid()}-{next(_SESSIONS)}"
    tasks = [(str(path), source, typed, bounds[i], bounds[i + 1], i == 0, session) for i in range(count)]
    objects: list[RawObject] = []
    table = TemplateTable()
    received: dict[int, _Received] = {}
    end: int | None = None
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # An executor, not multiprocessing.Pool: a worker that dies (killed, out of memory) breaks the pool
    # with an error instead of leaving the parent waiting for its result forever.
    pool = ProcessPoolExecutor(min(n, count), mp_context=_context())
    try:
        for got in pool.map(_work, tasks):
            if got == "fallback":
                raise _Fallback
            if got == "serial":
                f.seek(0)
                return None
            part, part_end = _unpack(got, source, table, os.path.abspath(path), typed, received)
            objects.extend(part)
            if part_end is not None:
                end = part_end
    except BrokenProcessPool:
        f.seek(0)
        return None  # this process decodes the file instead
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if end is None:
        raise _Fallback
    f.seek(end)
    return objects, _shell(header, f.read())
