"""The pending pods diagnosed in forked worker processes (pipeline.diagnose_snapshot's `jobs`) give the
bytes one process writes: the same `-o json` document whatever the worker count and the document order.

The parallel path is compared with the serial one (report.json.PodStream.pod in one process) on varied
generated clusters (tests/varied.py), golden cases and through the real command's stdout.
"""

from __future__ import annotations

import gc
import io
import json
import os
import random
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kdiagnose import pipeline
from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.report.json import PodStream
from kdiagnose.versions import dialect_for
from tests.varied import varied_items

ROOT = Path(__file__).resolve().parent.parent


def _written(snap: Snapshot, jobs: int, profiles: Any = None, source: str = "varied.json") -> bytes:
    buf = io.BytesIO()
    stream = PodStream(buf)
    report = diagnose_snapshot(snap, profiles, source=source, sink=stream, jobs=jobs)
    stream.finish(report)
    return buf.getvalue()


def _snapshot(items: list[dict[str, Any]], version: str = "v1.34.1") -> Snapshot:
    return build_snapshot([RawObject(o, "varied.json") for o in items], dialect_for(version))


@pytest.mark.parametrize(("seed", "version"), [(1, "v1.34.1"), (2, "v1.37.2"), (3, "v1.31.8")])
def test_workers_write_the_serial_bytes(seed: int, version: str, forks: list[int]) -> None:
    items = varied_items(40, 30, 60, seed)
    serial = _written(_snapshot(items, version), 1)
    assert not forks
    doc = json.loads(serial)
    assert doc["summary"]["unschedulable"] >= 5 and any(p["remedies"] for p in doc["pods"])
    for jobs in (2, 3):
        assert _written(_snapshot(items, version), jobs) == serial, jobs
    assert forks == [2, 3]
    # Document order: the items shuffled, two workers.
    random.Random(seed).shuffle(items)
    assert _written(_snapshot(items, version), 2) == serial
    assert forks == [2, 3, 2]


def test_pods_with_one_signature_go_to_one_worker() -> None:
    """Pods that share a scheduling signature share one replay and their remedies in one process."""
    import copy

    items = varied_items(10, 5, 6, 1)
    pending = [o for o in items if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    # A copy of the first pending pod under another name, without owner: the same scheduling inputs.
    twin = copy.deepcopy(pending[0])
    twin["metadata"]["name"] = "a-twin"
    twin["metadata"].pop("ownerReferences", None)
    first = copy.deepcopy(twin)
    first["metadata"]["name"] = "zz-twin"
    snap = _snapshot([*items, twin, first])
    ordered = sorted(snap.pods, key=lambda p: p.key)
    groups = pipeline._worker_groups(snap, ordered, 2) if snap.num_nodes else None
    # Below the work threshold: one process.
    assert groups is None
    old = pipeline.PARALLEL_MIN_WORK
    pipeline.PARALLEL_MIN_WORK = 0
    try:
        groups = pipeline._worker_groups(snap, ordered, 2)
    finally:
        pipeline.PARALLEL_MIN_WORK = old
    assert groups is not None
    keys = [[ordered[i].key for i in g] for g in groups]
    assert ["default/a-twin", "default/zz-twin"] in [[k for k in g if "twin" in k] for g in keys]
    assert sorted(i for g in groups for i in g) == list(range(len(ordered)))
    assert [g[0] for g in groups] == sorted(g[0] for g in groups)  # tasks in the order of their first pod
    assert pipeline._worker_groups(snap, ordered, 1) is None


def test_golden_cases_in_workers_are_the_serial_bytes(forks: list[int]) -> None:
    from tests.golden_harness import all_cases, case_inputs, scenario_for

    cases = [c for c in all_cases() if not json.loads(c.read_text()).get("error")]
    compared = 0
    for golden_json in cases[::7]:
        _, snap, profiles = case_inputs(golden_json)
        scenario = scenario_for(golden_json)
        before = len(forks)
        serial = _written(snap(), 1, profiles, scenario.name)
        assert len(forks) == before
        assert _written(snap(), 2, profiles, scenario.name) == serial, golden_json
        compared += len(forks) > before
    assert compared > 20  # cases with two pending pods or more, and distinct owners, took the workers


def test_the_cli_writes_the_same_stdout_with_workers(tmp_path: Path) -> None:
    """The real command: stdout is the process's own (a child must not write what was buffered)."""
    dump = tmp_path / "varied.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": varied_items(30, 10, 40, 2)}))
    code = "import kdiagnose.pipeline as p; p.PARALLEL_MIN_WORK = {}; from kdiagnose.cli import main; main()"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = {}
    for jobs, threshold in ((1, 10**18), (2, 0), (2, 10**18)):
        res = subprocess.run(
            [sys.executable, "-c", code.format(threshold), str(dump), "-o", "json", "--jobs", str(jobs)],
            capture_output=True,
            env=env,
            timeout=300,
        )
        assert not res.stderr.strip(), res.stderr
        runs[(jobs, threshold)] = (res.returncode, res.stdout)
    assert runs[(1, 10**18)][0] == 1  # some pod is unschedulable
    assert json.loads(runs[(1, 10**18)][1])["summary"]["unschedulable"] > 0
    assert runs[(2, 0)] == runs[(1, 10**18)] == runs[(2, 10**18)]


_REAL_RUN_GROUP = pipeline._run_group


def _dying_group(indices: list[int]) -> list[tuple[int, Any]]:
    """A worker's task that kills its process (as the OOM killer would) once a worker took it."""
    import multiprocessing

    if multiprocessing.parent_process() is not None and indices != [0]:
        os._exit(1)
    return _REAL_RUN_GROUP(indices)


def test_a_dead_worker_leaves_the_parent_to_finish_the_same_bytes(
    forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    items = varied_items(30, 20, 40, 4)
    serial = _written(_snapshot(items), 1)
    monkeypatch.setattr(pipeline, "_run_group", _dying_group)
    # Without the executor's broken-pool error the parent would wait for the lost task forever.
    assert _written(_snapshot(items), 2) == serial
    assert forks == [2]


class _Payload:
    """A result that says, in the parent, which of its kind are still alive after the parent read them."""

    live: ClassVar[weakref.WeakSet[_Payload]] = weakref.WeakSet()

    def __init__(self, index: int) -> None:
        self.index = index

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        _Payload.live.add(self)


def _payloads(indices: list[int]) -> list[tuple[int, Any]]:
    return [(i, _Payload(i)) for i in indices]


def test_the_parent_keeps_no_text_it_has_written() -> None:
    # Each pod's text is megabytes at 5,000 nodes: a finished future that keeps its result would keep
    # every text alive until the last pod (3 GB for 1,000 pods), not just the few that wait for their turn.
    groups = [[i] for i in range(12)]
    seen = []
    for i, payload in pipeline._in_workers(groups, _payloads, 2):
        seen.append(i)
        del payload
        gc.collect()
        assert sorted(p.index for p in _Payload.live if p.index <= i) == []
    assert seen == list(range(12))


def test_the_loads_freeze_outlives_the_workers() -> None:
    # The load freezes the snapshot out of the collector's way (load/gcpause.py); gc.unfreeze thaws every
    # frozen object, so the workers' own freeze must not be undone with it, or every later collection in
    # this process walks the whole snapshot again.
    gc.unfreeze()
    kept = [[object()] for _ in range(1000)]
    gc.freeze()
    before = gc.get_freeze_count()
    try:
        assert before >= len(kept)
        assert [i for i, _ in pipeline._in_workers([[0], [1], [2]], _payloads, 2)] == [0, 1, 2]
        assert gc.get_freeze_count() >= before
    finally:
        gc.unfreeze()


def test_a_freeze_the_workers_started_alone_is_undone() -> None:
    gc.unfreeze()
    assert [i for i, _ in pipeline._in_workers([[0], [1], [2]], _payloads, 2)] == [0, 1, 2]
    assert gc.get_freeze_count() == 0
