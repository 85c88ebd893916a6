"""The parallel JSON loader (load/parallel.py: byte ranges decoded in worker processes) gives exactly what the
one-process streaming loader gives: the same objects in the same order, and so the same snapshot."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.load import fast, parallel, stream_json, wire
from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.versions import dialect_for
from tests.test_compact_pods import EDGE_PODS, _admitted, _golden_items, _nodes
from tests.test_fast_loaders import snapshot_view

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "fixtures" / "golden"


PARALLEL_RESULTS: list[bool] = []  # per load with jobs > 1: did the workers' result come back


@pytest.fixture(autouse=True)
def small_ranges(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Stream and split every file, in ranges and blocks small enough that items straddle both."""
    monkeypatch.setattr(fast, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(stream_json, "BLOCK_SIZE", 3000)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "MIN_RANGE_BYTES", 1500)
    real = parallel.load_in_parallel

    def spy(*args: Any) -> Any:
        got = real(*args)
        PARALLEL_RESULTS.append(got is not None)
        return got

    monkeypatch.setattr(parallel, "load_in_parallel", spy)
    PARALLEL_RESULTS.clear()
    yield
    parallel.set_jobs(None)


def _load(path: Path, jobs: int) -> Any:
    parallel.set_jobs(jobs)
    return load_paths([str(path)])


def _view(result: Any) -> list[tuple[Any, ...]]:
    return [
        (
            r.compact is not None,
            # A compact record's row (model.objects.Row) and spec: the workers' rows, sent as msgpack with
            # shared values by index, come back equal to the ones this process computes.
            getattr(r.compact, "row", None),
            getattr(getattr(r.compact, "template", None), "key", None),
            copy.deepcopy(r.obj),
            r.where,
        )
        for r in result.objects
    ]


def _assert_same(path: Path, *, release: str = "v1.34.1", jobs: tuple[int, ...] = (2, 3)) -> None:
    serial = _load(path, 1)
    serial_view = _view(serial)
    serial_snap = snapshot_view(build_snapshot(_load(path, 1).objects, dialect_for(release)))
    for n in jobs:
        PARALLEL_RESULTS.clear()
        par = _load(path, n)
        assert PARALLEL_RESULTS == [True]  # the workers did decode it
        assert _view(par) == serial_view
        assert par.list_kinds == serial.list_kinds and par.files == serial.files
        templates = {
            id(r.compact.template): r.compact.template.key for r in par.objects if r.compact is not None
        }
        assert len(set(templates.values())) == len(templates)  # equal specs share one Template
        assert snapshot_view(build_snapshot(_load(path, n).objects, dialect_for(release))) == serial_snap


def _write(tmp_path: Path, items: list[dict[str, Any]], name: str = "dump.json", kind: str = "List") -> Path:
    path = tmp_path / name
    # A typed List (kubectl cluster-info dump) names its kind before the items; kubectl get sorts keys.
    doc = (
        {"apiVersion": "v1", "kind": kind, "items": items}
        if kind != "List"
        else {"apiVersion": "v1", "items": items, "kind": kind}
    )
    path.write_text(json.dumps(doc, indent=4))
    return path


def _names(path: Path, bounds: list[int], spare: list[bytearray] | None = None) -> list[tuple[str, str]]:
    names: list[tuple[str, str]] = []
    ends = []
    with path.open("rb") as f:
        for i in range(len(bounds) - 1):
            objects, end = stream_json.decode_range(
                f, "x", None, bounds[i], bounds[i + 1], i == 0, None, spare
            )
            names += [(r.obj["kind"], r.obj["metadata"]["name"]) for r in objects]
            ends += [end] if end is not None else []
    assert len(ends) == 1
    return names


def test_ranges_decoded_in_one_reused_buffer(tmp_path: Path) -> None:
    """A worker's ranges share one window buffer (decode_range's `spare`), whose old bytes past the new
    range's never leak into it: the items are those of fresh buffers, each read once."""
    path = _write(tmp_path, [*_nodes(), *EDGE_PODS])
    data = path.read_bytes()
    _, first = stream_json._header(bytearray(data[: 1 << 16]))
    whole = [(o["kind"], o["metadata"]["name"]) for o in json.loads(data)["items"]]
    size = len(data)
    for cuts in (2, 5, 17, 60):
        bounds = [first + (size - first) * i // cuts for i in range(cuts)] + [size]
        spare: list[bytearray] = []
        assert _names(path, bounds, spare) == whole
        # The ranges in the reverse order too: a later range's bytes are in the buffer the earlier one takes.
        got: list[tuple[str, str]] = []
        with path.open("rb") as f:
            for i in reversed(range(cuts)):
                objects, _ = stream_json.decode_range(
                    f, "x", None, bounds[i], bounds[i + 1], i == 0, None, spare
                )
                got[:0] = [(r.obj["kind"], r.obj["metadata"]["name"]) for r in objects]
        assert got == whole
        assert len(spare) == 1
    # The buffer is taken again, not a new one; a buffer still viewed (an export alive) is not taken.
    buf = spare[0]
    with path.open("rb") as f:
        stream_json.decode_range(f, "x", None, first, size, True, None, spare)
        assert spare == [buf] and spare[0] is buf
        with memoryview(buf):
            stream_json.decode_range(f, "x", None, first, size, True, None, spare)
            assert len(spare) == 1 and spare[0] is not buf


def test_ranges_partition_the_items(tmp_path: Path) -> None:
    path = _write(tmp_path, [*_nodes(), *EDGE_PODS])
    data = path.read_bytes()
    _, first = stream_json._header(bytearray(data[: 1 << 16]))
    whole = [(o["kind"], o["metadata"]["name"]) for o in json.loads(data)["items"]]
    size = len(data)
    for cuts in (2, 5, 17, 60):
        assert _names(path, [first + (size - first) * i // cuts for i in range(cuts)] + [size]) == whole
    # A cut at every byte around every separator: each item is read once, by the range its `{` is in.
    seps = [i for i in range(len(data)) if data.startswith(stream_json._SEP, i)]
    for sep in seps:
        for cut in range(sep - 2, sep + len(stream_json._SEP) + 2):
            assert _names(path, [first, cut, size]) == whole, cut


@pytest.mark.parametrize("seed", [1, 4])
def test_generated_varied_dump(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "gen.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "generate.py"),
            *("--nodes", "30", "--pods-per-node", "10", "--pending", "25", "--varied", "--seed", str(seed)),
            *("--out", str(path)),
        ],
        check=True,
    )
    _assert_same(path)
    _assert_same(path, release="v1.33.3", jobs=(2,))


def test_edge_pods(tmp_path: Path) -> None:
    _assert_same(_write(tmp_path, [*_nodes(), *EDGE_PODS]), release="v1.37.2")


def test_typed_pod_list(tmp_path: Path) -> None:
    pods = [{k: v for k, v in p.items() if k not in ("kind", "apiVersion")} for p in EDGE_PODS]
    _assert_same(_write(tmp_path, pods, kind="PodList"))


@pytest.mark.parametrize("case", sorted(GOLDEN.glob("*.yaml"))[::6], ids=lambda p: p.stem)
def test_golden_cases(tmp_path: Path, case: Path) -> None:
    items = _golden_items(case)
    _assert_same(_write(tmp_path, _admitted(items)), jobs=(2,))


def test_an_item_of_an_unexpected_type_takes_the_one_process_path(tmp_path: Path) -> None:
    items = [*_nodes(), *EDGE_PODS]
    odd = copy.deepcopy(EDGE_PODS[0])
    odd["metadata"]["name"] = "odd"
    odd["spec"]["containers"] = {"not": "a list"}
    items.insert(5, odd)
    path = _write(tmp_path, items)
    par = _view(_load(path, 2))
    assert PARALLEL_RESULTS == [False]  # the workers gave it back
    assert par == _view(_load(path, 1))


def test_not_a_kubectl_list_is_decoded_whole(tmp_path: Path) -> None:
    path = tmp_path / "flat.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*_nodes(), *EDGE_PODS]}))
    assert not any(r.compact is not None for r in _load(path, 2).objects)
    assert _view(_load(path, 2)) == _view(_load(path, 1))


def test_jobs_knob(monkeypatch: pytest.MonkeyPatch) -> None:
    parallel.set_jobs(None)
    monkeypatch.setenv(parallel.JOBS_ENV, "3")
    assert parallel.jobs() == 3
    monkeypatch.delenv(parallel.JOBS_ENV)
    assert parallel.jobs() == parallel.default_jobs() >= 1
    parallel.set_jobs(1)
    assert parallel.jobs() == 1


def test_invalid_jobs_variable_is_a_usage_error(tmp_path: Path) -> None:
    path = _write(tmp_path, [*_nodes(), *EDGE_PODS])
    env = {"KDIAGNOSE_JOBS": "many", "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    res = subprocess.run(
        [sys.executable, "-m", "kdiagnose.cli", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2
    assert "KDIAGNOSE_JOBS" in res.stderr and "Traceback" not in res.stderr
    res = subprocess.run(
        [sys.executable, "-m", "kdiagnose.cli", str(path), "--jobs", "2", "-o", "json"],
        env={**env, "KDIAGNOSE_JOBS": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode in (0, 1), res.stderr


def _die(args: Any) -> Any:
    os._exit(3)  # a worker killed mid-range (out of memory, a signal)


def test_a_worker_that_dies_does_not_hang_the_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, [*_nodes(), *EDGE_PODS])
    serial = _view(_load(path, 1))
    monkeypatch.setattr(parallel, "_work", _die)
    PARALLEL_RESULTS.clear()
    assert _view(_load(path, 2)) == serial  # decoded in this process instead
    assert PARALLEL_RESULTS == [False]


@pytest.mark.parametrize(
    ("spec", "status"),
    [
        pytest.param({"priority": 2**40}, None, id="priority out of int32"),
        pytest.param({"tolerations": [{"key": "", "operator": "Equal"}]}, None, id="bad toleration"),
        pytest.param(
            {"containers": [{"name": "a", "resources": {"requests": {"cpu": "-1"}}}]}, None, id="quantity"
        ),
        pytest.param({}, {"phase": 3}, id="status phase type"),
    ],
)
def test_invalid_pods_fail_with_the_one_process_message(
    tmp_path: Path, spec: dict[str, Any], status: dict[str, Any] | None
) -> None:
    """The workers leave a spec's validation to the parent (TemplateTable.defer): a pod whose spec fails is
    expanded there and reported with the message of the one-process load."""
    from kdiagnose.errors import InputError
    from tests.test_compact_pods import _bound

    bad = _bound("bad", **spec)
    if status is not None:
        bad["status"] = status
    path = _write(tmp_path, [*_nodes(), *EDGE_PODS[:3], bad, *EDGE_PODS[3:]])
    errors = []
    for jobs in (1, 2):
        with pytest.raises(InputError) as got:
            build_snapshot(_load(path, jobs).objects, dialect_for("v1.34.1"))
        errors.append(str(got.value))
    assert PARALLEL_RESULTS[-1] is True
    assert errors[0] == errors[1] and "Pod shop/bad" in errors[0]


def test_workers_check_whole_objects_and_the_parent_reports_a_failure(tmp_path: Path) -> None:
    """The workers validate the objects they decode whole (nodes, pending pods): those that pass are not
    checked again by build_snapshot; one that fails is, and reports what the one-process load reports."""
    from kdiagnose.errors import InputError

    good = _write(tmp_path, [*_nodes(), *EDGE_PODS])
    loaded = _load(good, 2)
    assert PARALLEL_RESULTS[-1] is True
    assert all(r.valid for r in loaded.objects if r.compact is None)
    assert not any(r.valid for r in loaded.objects if r.compact is not None)  # checked as their rows
    bad_node = copy.deepcopy(_nodes()[1])
    bad_node["status"]["allocatable"]["cpu"] = "-2"
    path = _write(tmp_path, [_nodes()[0], bad_node, *EDGE_PODS], "bad.json")
    errors = []
    for jobs in (1, 2):
        objects = _load(path, jobs).objects
        assert not any(r.valid for r in objects if r.kind == "Node" and r.obj["metadata"]["name"] == "node-b")
        with pytest.raises(InputError) as got:
            build_snapshot(objects, dialect_for("v1.34.1"))
        errors.append(str(got.value))
    assert errors[0] == errors[1] and "node-b" in errors[0]


def test_each_worker_sends_a_shared_value_once_per_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker sends each spec key, label set and owner list once per load, not once per range (wire.Sent):
    its later ranges refer to what it sent before, and the parent (_Received, per worker) resolves them to
    the objects the one-process load gives."""
    import msgspec

    from tests.test_compact_pods import _bound

    # Three specs and two label sets among 120 pods, spread over both nodes, and the edge pods.
    pods = [
        _bound(f"p-{i:03}", f"node-{'ab'[i % 2]}", containers=[{"name": "c", "image": f"img-{i % 3}"}])
        for i in range(120)
    ]
    for i, p in enumerate(pods):
        p["metadata"]["labels"] = {"app": f"a{i % 2}"}
    path = _write(tmp_path, [*_nodes(), *pods, *EDGE_PODS])
    real = parallel.unpack
    sent: list[tuple[int, list[bytes], int, int]] = []  # (pid, keys, label sets, specs used) per range

    def spy(data: bytes, *args: Any) -> Any:
        _, pid, keys, _, _, _, labels, _, _, rows = msgspec.msgpack.decode(data)
        sent.append((pid, keys, len(labels), len({r[1] for r in rows if r[0] == wire.BOUND})))
        return real(data, *args)

    monkeypatch.setattr(parallel, "unpack", spy)
    _assert_same(path, jobs=(2,))
    sent.clear()
    assert _view(_load(path, 2)) == _view(_load(path, 1))
    assert len(sent) >= 8  # ranges of both workers (or of one, if it took them all)
    by_pid: dict[int, list[bytes]] = {}
    for pid, keys, _, _ in sent:
        by_pid.setdefault(pid, []).extend(keys)
    for keys in by_pid.values():
        assert len(keys) == len(set(keys))  # no spec sent twice by one worker
    # The later ranges of a worker reuse its earlier values: fewer keys sent than the ranges' specs.
    assert sum(len(k) for k in by_pid.values()) < sum(used for *_, used in sent) / 2


def test_a_worker_state_inherited_from_another_load_is_not_used(tmp_path: Path) -> None:
    """A forked worker starts with its parent's module state: a wire.Sent of another load (which this load's
    parent never received) is replaced, not taken as sent."""
    path = _write(tmp_path, [*_nodes(), *EDGE_PODS])
    serial = _view(_load(path, 1))
    stale = wire.sent_for("another load")
    stale.strs.add("shop", "shop")
    stale.labels.add(0, {})
    try:
        PARALLEL_RESULTS.clear()
        assert _view(_load(path, 2)) == serial
        assert PARALLEL_RESULTS == [True]
    finally:
        wire._WORKER_SENT = None


def test_nodes_modelled_ahead_are_the_snapshot_s_nodes(tmp_path: Path) -> None:
    """The parent models each Node as its range comes back (RawObject.node); build_snapshot takes that model
    once: the snapshot equals the one-process load's, a second snapshot of the same objects and a keep_raw
    one model the nodes afresh, and a node left unmodelled is modelled by build_snapshot."""
    path = _write(tmp_path, [*_nodes(), *EDGE_PODS])
    dialect = dialect_for("v1.34.1")
    serial = snapshot_view(build_snapshot(_load(path, 1).objects, dialect))
    assert not any(r.node is not None for r in _load(path, 1).objects)
    objects = _load(path, 2).objects
    assert PARALLEL_RESULTS[-1] is True
    ahead = [r.node for r in objects if r.kind == "Node"]
    assert len(ahead) == 2 and all(n is not None for n in ahead)
    snap = build_snapshot(objects, dialect)
    assert snapshot_view(snap) == serial
    assert [ni.node for ni in snap.node_infos] == ahead  # the models made ahead, taken
    assert all(r.node is None for r in objects)
    again = build_snapshot(objects, dialect)
    assert snapshot_view(again)["nodes"] == serial["nodes"]  # (admission changed the pending pods' objects)
    assert not any(a is b for a, b in zip(ahead, [ni.node for ni in again.node_infos], strict=True))
    objects = _load(path, 2).objects
    kept = build_snapshot(objects, dialect, keep_raw=True)
    assert all(ni.node.raw is not None for ni in kept.node_infos)
    objects = _load(path, 2).objects
    for r in objects:
        r.node = None
    assert snapshot_view(build_snapshot(objects, dialect)) == serial


def test_partial_dump_warnings_name_namespaces_and_missing_nodes() -> None:
    """partial_dump_warnings' C-level sets: one namespace among many pods, and nodes the pods are bound to
    that the input lacks (pending pods, with no node, are not missing nodes)."""
    from kdiagnose.load.raw import RawObject
    from tests.test_compact_pods import _bound

    pods = [_bound(f"p-{i}", node=("node-a", "node-x", "node-y", "")[i % 4]) for i in range(30)]
    for p in pods:
        if not p["spec"]["nodeName"]:
            del p["spec"]["nodeName"]
            p["status"] = {"phase": "Pending"}
    snap = build_snapshot([RawObject(o, "x") for o in [*_nodes(), *pods]], dialect_for("v1.34.1"))
    assert snap.warnings[:2] == [
        "the input has pods of only 1 namespace(s) (shop): was the dump taken without -A/--all-namespaces? "
        "Resource, affinity and spread checks may be wrong",
        "2 node(s) that pods are bound to are missing from the input (e.g. node-x): was the node list filtered?",
    ]


def test_idle_work_runs_once_in_this_process_after_the_workers_are_forked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import multiprocessing

    path = _write(tmp_path, [*_nodes(), *EDGE_PODS])
    calls: list[tuple[int, int]] = []  # (pid, live worker processes) at each call

    def work() -> None:
        calls.append((os.getpid(), len(multiprocessing.active_children())))

    with parallel.idle_work(work):
        par = _load(path, 2)
        assert PARALLEL_RESULTS == [True]
        _load(path, 2)  # a second load in the block: the work was done once
    assert calls == [(os.getpid(), 2)]
    assert _view(par) == _view(_load(path, 1))
    # Outside the block, and a load without workers inside one: not run.
    _load(path, 2)
    with parallel.idle_work(work):
        _load(path, 1)
    assert len(calls) == 1


def test_import_ahead_imports_every_module_the_diagnosis_imports_later() -> None:
    # In a fresh process: after import_ahead, diagnosing the demo dump (pending pods, remedies, events)
    # imports no other module of the replay, the remedies or the recorded events; a module renamed or
    # moved makes import_ahead itself fail here, not on a user's big dump.
    code = (
        "import sys\n"
        "from kdiagnose.pipeline import diagnose_snapshot, import_ahead\n"
        "from kdiagnose.load.dump import load_snapshot\n"
        f"snap, _ = load_snapshot([{str(ROOT / 'fixtures' / 'demo' / 'cluster.yaml')!r}], None)\n"
        "import_ahead()\n"
        "before = set(sys.modules)\n"
        "report = diagnose_snapshot(snap)\n"
        "assert any(not p.diagnosis.scheduled for p in report.pods)\n"
        "late = sorted(m for m in set(sys.modules) - before if m.startswith('kdiagnose.'))\n"
        "print(' '.join(late))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False, timeout=120
    )
    assert res.returncode == 0, res.stderr
    late = res.stdout.split()
    prefixes = ("kdiagnose.scheduler.", "kdiagnose.remedies.", "kdiagnose.autoscaler.", "kdiagnose.recorded")
    assert [m for m in late if m.startswith(prefixes)] == []
