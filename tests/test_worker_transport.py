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


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_with_file_texts_large_texts_stay_in_their_file_until_written(tmp_path: Path) -> None:
    """A sink that takes FileTexts (the -o json stream) gets each large text as a span of the spool file
    (removed from the directory, open until the text is gone) and writes it with sendfile, or by reading
    it where sendfile cannot write (a file opened for appending, a buffer in memory): the same bytes."""
    import io

    from kdiagnose.spool import FileText, write_texts

    before, before_files = _open_fds(), _spool_files()
    out = list(pipeline._in_workers([[i] for i in range(6)], _made, 2, file_texts=True))
    assert [i for i, _ in out] == list(range(6))
    texts = [text for _, (_, text) in out]
    assert all(isinstance(t, FileText) and len(t) == _BIG for t in texts)
    assert _spool_files() == before_files  # the run's directory is gone, its files with it
    assert _open_fds() - before == 6  # each spooled file still open ...
    expected = b"".join(bytes([i]) * _BIG for i in range(6))
    plain = tmp_path / "plain"
    with plain.open("wb") as f:
        f.write(b"head")  # buffered: written before the first text
        write_texts(f, [texts[0], b"-", *texts[1:]])
        f.write(b"tail")
    assert plain.read_bytes() == b"head" + expected[:_BIG] + b"-" + expected[_BIG:] + b"tail"
    appended = tmp_path / "appended"
    appended.write_bytes(b"old")
    with appended.open("ab") as f:  # sendfile refuses O_APPEND: read and written
        write_texts(f, texts)
    assert appended.read_bytes() == b"old" + expected
    buf = io.BytesIO()
    write_texts(buf, texts)
    assert buf.getvalue() == expected
    del out, texts
    assert _open_fds() == before  # ... and closed with its last text


def test_without_file_texts_a_spooled_result_is_read_back_whole() -> None:
    from kdiagnose.spool import FileText

    def nested(indices: list[int]) -> list[tuple[int, Any]]:
        return [(i, ([b"a" * _BIG, b"small"], (b"b" * _BIG, "s"))) for i in indices]

    before = _open_fds()
    out = list(pipeline._in_workers([[0], [1]], nested, 2))
    assert out == [(i, ([b"a" * _BIG, b"small"], (b"b" * _BIG, "s"))) for i in (0, 1)]
    assert not any(isinstance(x, FileText) for _, (parts, rest) in out for x in (*parts, *rest))
    assert _open_fds() == before


def test_a_spool_file_whose_texts_are_cut_short_is_refused(tmp_path: Path) -> None:
    import pickle

    from kdiagnose import spool

    path = str(tmp_path / "r")
    assert spool.write(path, [(0, ([b"x" * _BIG], "kept"))], 0, texts_apart=True)
    size = os.path.getsize(path)
    os.truncate(path, size - 1)
    with pytest.raises(pickle.UnpicklingError):
        spool.read(path)
    assert not os.path.exists(path)  # removed all the same
    assert not spool.write(path, [(0, b"tiny")], 1 << 18, texts_apart=True)  # below the threshold: no file
    assert not os.path.exists(path)


def test_spooled_node_maps_written_by_sendfile_are_the_serial_bytes(forks: list[int], tmp_path: Path) -> None:
    """Every bytes part of every pod's text out of its pickle (threshold 0), the document written to a
    file (sendfile) and to memory: one process's bytes either way."""
    from kdiagnose import spool
    from kdiagnose.pipeline import diagnose_snapshot
    from kdiagnose.report.json import PodStream

    items = varied_items(30, 20, 40, 7)
    serial = _written(_snapshot(items), 1)
    sent: list[int] = []
    real_sendfile = os.sendfile

    def counted(out_fd: int, in_fd: int, offset: int | None, count: int) -> int:
        n = real_sendfile(out_fd, in_fd, offset, count)
        sent.append(n)
        return n

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline, "_SPOOL_ABOVE", 0)
        mp.setattr(spool, "OUT_OF_BAND", 0)
        mp.setattr(os, "sendfile", counted)
        assert _written(_snapshot(items), 2) == serial  # in memory: read from the files
        assert not sent
        path = tmp_path / "out.json"
        with path.open("wb") as f:
            stream = PodStream(f)
            report = diagnose_snapshot(_snapshot(items), source="varied.json", sink=stream, jobs=2)
            stream.finish(report)
    assert path.read_bytes() == serial
    assert sum(sent) > len(serial) // 2  # most of the document came by sendfile
    assert forks == [2, 2]


def test_a_text_reaches_a_non_blocking_pipe_whole() -> None:
    """A non-blocking stdout (some CI runners leave theirs so) that fills up: sendfile waits for room."""
    import threading
    import time

    from kdiagnose import spool

    path = "/dev/shm/kdiagnose-test-text" if Path("/dev/shm").is_dir() else "/tmp/kdiagnose-test-text"
    text = bytes(range(256)) * (1 << 14)  # 4 MB: many times a pipe's buffer
    assert spool.write(path, [(0, [text])], 0, texts_apart=True)
    [(_, [span])] = spool.read(path)
    r, w = os.pipe()
    os.set_blocking(w, False)
    got = bytearray()

    def drain() -> None:
        while chunk := os.read(r, 1 << 16):
            got.extend(chunk)
            time.sleep(0.001)

    reader = threading.Thread(target=drain)
    reader.start()
    with os.fdopen(w, "wb") as out:
        spool.write_texts(out, [b"<", span])  # (nothing after it: a full pipe at close would refuse it)
    reader.join(30)
    os.close(r)
    assert bytes(got) == b"<" + text
