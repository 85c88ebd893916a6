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

import contextlib
import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from kdiagnose.load.compact import TemplateTable
from kdiagnose.load.raw import LoadResult, RawObject, record_list
from kdiagnose.load.wire import Received, fork_context, pack, sent_for, unpack

__all__ = [
    "JOBS_ENV",
    "PARALLEL_MIN_BYTES",
    "default_jobs",
    "idle_work",
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
# What this process does while the workers decode its first range (idle_work): it would only wait then.
_idle: list[Callable[[], None]] = []


@contextlib.contextmanager
def idle_work(fn: Callable[[], None]) -> Iterator[None]:
    """Run `fn` once during the loads inside the block, in this process while the workers decode, after
    they are forked (a thread would be forked into them holding who knows which lock). A load that takes
    no workers does not run it."""
    _idle.append(fn)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            _idle.remove(fn)


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
            return pack(objects, end, sent_for(session))
    except (_Fallback, OSError):
        return "fallback"
    except (_Serial, msgspec.EncodeError, OverflowError, TypeError, ValueError):
        return "serial"


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
    # The workers' Sent tables (load/wire.py) belong to this load alone.
    session = f"{os.getpid()}-{next(_SESSIONS)}"
    tasks = [(str(path), source, typed, bounds[i], bounds[i + 1], i == 0, session) for i in range(count)]
    objects: list[RawObject] = []
    table = TemplateTable()
    received: dict[int, Received] = {}
    end: int | None = None
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # An executor, not multiprocessing.Pool: a worker that dies (killed, out of memory) breaks the pool
    # with an error instead of leaving the parent waiting for its result forever.
    pool = ProcessPoolExecutor(min(n, count), mp_context=fork_context())
    try:
        # map submits every task at once, so every worker is forked when it returns.
        results = pool.map(_work, tasks)
        while _idle:
            _idle.pop(0)()
        for got in results:
            if got == "fallback":
                raise _Fallback
            if got == "serial":
                f.seek(0)
                return None
            part, part_end = unpack(got, source, table, os.path.abspath(path), typed, received)
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
