"""How the pod workers' results reach the writer (pipeline._in_workers): large results through files of a
spool directory, small ones through the executor's pipe, a bounded number of groups handed out ahead of
the writer, and every result in index order whatever the way it took.

The work functions here run in forked workers (_in_workers sets them before the fork); their payloads
say which process made them, so the tests can tell a result made in a worker from one made here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kdiagnose import pipeline
from tests.test_parallel_pods import _snapshot, _written
from tests.varied import varied_items

# Big enough to be spooled at the default threshold (a pod's -o json text at 5,000 nodes is ~2.8 MB).
_BIG = 1 << 19


def _made(indices: list[int]) -> list[tuple[int, Any]]:
    return [(i, (os.getpid(), bytes([i % 256]) * _BIG)) for i in indices]


def _small(indices: list[int]) -> list[tuple[int, Any]]:
    return [(i, os.getpid()) for i in indices]


def _spool_files() -> list[str]:
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(os.environ.get("TMPDIR", "/tmp"))
    return sorted(p.name for p in shm.glob("kdiagnose-*"))


def test_large_results_come_through_the_spool_and_it_is_removed() -> None:
    before = _spool_files()
    taken: list[str] = []
    real = pipeline._Spooled.take

    def take(self: pipeline._Spooled) -> list[tuple[int, Any]] | None:
        assert Path(self.path).is_file()
        taken.append(self.path)
        return real(self)

    groups = [[i] for i in range(8)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline._Spooled, "take", take)
        out = list(pipeline._in_workers(groups, _made, 2))
    assert [i for i, _ in out] == list(range(8))
    assert all(pid != os.getpid() for _, (pid, _) in out)  # made in the workers
    assert all(text == bytes([i]) * _BIG for i, (_, text) in out)
    assert len(taken) == 8  # every result of half a megabyte went through a file ...
    assert not any(Path(p).exists() for p in taken)  # ... read once and removed
    assert _spool_files() == before  # and the run's directory is gone


def test_small_results_take_the_pipe() -> None:
    taken: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline._Spooled, "take", lambda self: taken.append(self.path) or [])
        out = list(pipeline._in_workers([[0], [1], [2]], _small, 2))
    assert [i for i, _ in out] == [0, 1, 2] and all(pid != os.getpid() for _, pid in out)
    assert taken == []


def test_without_a_spool_directory_every_result_takes_the_pipe() -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline, "_spool_directory", lambda: None)
        out = list(pipeline._in_workers([[i] for i in range(4)], _made, 2))
    assert [i for i, _ in out] == [0, 1, 2, 3]
    assert all(pid != os.getpid() and text == bytes([i]) * _BIG for i, (pid, text) in out)


def test_a_spool_file_that_cannot_be_read_is_diagnosed_here() -> None:
    real = pipeline._Spooled.take
    cut = []

    def lost(self: pipeline._Spooled) -> list[tuple[int, Any]] | None:
        # One file removed, the others cut short.
        if not cut:
            os.unlink(self.path)
        else:
            os.truncate(self.path, 100)
        cut.append(self.path)
        return real(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline._Spooled, "take", lost)
        out = list(pipeline._in_workers([[0, 2], [1], [3]], _made, 2))
    assert [i for i, _ in out] == [0, 1, 2, 3]
    assert all(pid == os.getpid() and text == bytes([i]) * _BIG for i, (pid, text) in out)
    assert len(cut) == 3 and not any(Path(p).exists() for p in cut)


def test_a_slow_writer_holds_the_workers_back() -> None:
    """The workers are handed a few groups ahead of the one written next, not every group at once: a
    reader that stops (a pager, a full pipe) must not let every pod's text pile up in memory."""
    from concurrent.futures import ProcessPoolExecutor

    submitted: list[list[int]] = []
    real = ProcessPoolExecutor.submit

    def counted(self: ProcessPoolExecutor, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        submitted.append(args[0])
        return real(self, fn, *args, **kwargs)

    groups = [[i] for i in range(40)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ProcessPoolExecutor, "submit", counted)
        results = pipeline._in_workers(groups, _small, 2)
        first = next(results)
        assert first[0] == 0
        ahead = 2 * pipeline._AHEAD_PER_WORKER
        assert len(submitted) <= 1 + ahead
        rest = list(results)
    assert [i for i, _ in rest] == list(range(1, 40))
    assert submitted == groups  # each group handed out once, in order


@pytest.mark.parametrize("ahead", [0, 1])
def test_groups_far_apart_are_all_handed_out(ahead: int) -> None:
    """A group of replicas spans indices far apart: the group holding the index the writer waits for is
    always handed out, however few groups may run ahead (with none: only that one)."""
    import signal

    def hung(*_: object) -> None:
        raise TimeoutError("the writer waits for a group never handed out")

    groups = [[0, 9], [1, 5], [2], [3], [4, 8], [6], [7]]
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(pipeline, "_AHEAD_PER_WORKER", ahead)
            out = list(pipeline._in_workers(groups, _small, 2))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert [i for i, _ in out] == list(range(10))


def test_spooled_pod_texts_are_the_serial_bytes(forks: list[int]) -> None:
    # Every pod's text through the spool (threshold 0): the document one process writes.
    items = varied_items(30, 20, 40, 5)
    serial = _written(_snapshot(items), 1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline, "_SPOOL_ABOVE", 0)
        taken: list[str] = []
        real = pipeline._Spooled.take

        def take(self: pipeline._Spooled) -> list[tuple[int, Any]] | None:
            taken.append(self.path)
            return real(self)

        mp.setattr(pipeline._Spooled, "take", take)
        assert _written(_snapshot(items), 2) == serial
    assert forks == [2] and taken


_TERMINATED = """
import os, sys, time
sys.path.insert(0, {root!r})
from kdiagnose import pipeline

def slow(indices):
    time.sleep(0.3)
    return [(i, b"x" * (1 << 19)) for i in indices]

for i, _ in pipeline._in_workers([[i] for i in range(200)], slow, 2):
    if i == 0:
        print(pipeline._SPOOL, flush=True)
"""


def test_a_terminated_run_removes_its_spool_directory(tmp_path: Path) -> None:
    """SIGTERM (a CI job's timeout) while the workers run: the run ends with 143 and leaves no directory
    of texts behind in memory (/dev/shm is not cleared until the machine restarts)."""
    import signal
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parent.parent)
    script = tmp_path / "terminated.py"
    script.write_text(_TERMINATED.format(root=root))
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        spool = child.stdout.readline().strip()
        assert spool and Path(spool).is_dir()
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        child.kill()
        child.wait()
    assert not Path(spool).exists()
