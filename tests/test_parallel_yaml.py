"""A big YAML List's batches parsed in worker processes (load/stream_yaml.py `_Batches`) give exactly the
objects and the snapshot the one-process stream gives: the same items in the same order, through the
same trimming; a batch that does not parse alone sends the whole file to files.py either way, and a batch
a worker cannot pack (an integer past 64 bits) is parsed by the parent."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from kdiagnose.errors import InputError
from kdiagnose.load import fast, parallel, stream_yaml, wire
from kdiagnose.load.compact import _ITEM, slim_pod
from kdiagnose.load.files import load_paths
from kdiagnose.load.raw import LoadResult
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.load.trim import trim_pod
from kdiagnose.versions import dialect_for
from tests.test_compact_pods import _admitted
from tests.test_fast_loaders import cluster_items, snapshot_view
from tests.varied import varied_items

UNPACKED: list[int] = []  # per batch the parent received from a worker: its objects


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Stream every file in blocks small enough for many batches, each to the workers."""
    monkeypatch.setattr(fast, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(stream_yaml, "BLOCK_SIZE", 2000)
    real = wire.unpack

    def spy(*args: Any) -> Any:
        got = real(*args)
        UNPACKED.append(len(got[0]))
        return got

    monkeypatch.setattr(wire, "unpack", spy)
    UNPACKED.clear()
    yield
    parallel.set_jobs(None)


def _load(path: Path, jobs: int) -> Any:
    parallel.set_jobs(jobs)
    return load_paths([str(path)])


def _slim(obj: Any) -> Any:
    """A bound pod with only the fields both forms keep: a compact record gives back what the JSON stream
    keeps (load/compact.py slim_pod: a container status's whole state, no annotations), one process the
    trimmed dict (load/trim.py trim_pod: only a waiting state, the annotations a check reads); any other
    object as it is."""
    spec = obj.get("spec")
    if obj.get("kind") == "Pod" and isinstance(spec, dict) and spec.get("nodeName"):
        return trim_pod(slim_pod(_ITEM.decode(orjson.dumps(obj))))
    return obj


def _view(result: Any) -> list[tuple[Any, ...]]:
    # The workers send bound pods as compact records, one process keeps them as trimmed dicts: the same
    # pods (the snapshots are compared too), each compared as the record gives it back.
    return [(_slim(copy.deepcopy(r.obj)), r.where) for r in result.objects]


def _compact(result: Any) -> int:
    return sum(1 for r in result.objects if r.compact is not None)


def _write(tmp_path: Path, items: list[dict[str, Any]], *, sort_keys: bool = True) -> Path:
    # As kubectl writes `get -o yaml`: apiVersion, items (each a block at column 0), kind, metadata.
    path = tmp_path / "dump.yaml"
    # Copied through JSON: no object shared between items, so PyYAML writes no alias (kubectl never does).
    doc = {"apiVersion": "v1", "items": json.loads(json.dumps(items)), "kind": "List", "metadata": {}}
    path.write_text(yaml.safe_dump(doc, sort_keys=sort_keys))
    result = LoadResult()
    assert stream_yaml.load_yaml_list(path, str(path), result)  # the streamed path takes it
    return path


def _assert_same(path: Path, release: str = "v1.34.1", compact: bool = True) -> None:
    UNPACKED.clear()
    serial = _load(path, 1)
    assert UNPACKED == []
    for n in (2, 3):
        UNPACKED.clear()
        par = _load(path, n)
        assert len(UNPACKED) > 3  # the workers parsed the batches
        bound = sum(1 for r in serial.objects if r.obj.get("kind") == "Pod" and r.obj["spec"].get("nodeName"))
        # ... and made the (admitted) bound pods compact records, as one process does
        assert _compact(par) == _compact(serial) and (_compact(par) >= bound // 2 > 0 or not compact)
        assert _view(par) == _view(serial)
        assert par.list_kinds == serial.list_kinds and par.files == serial.files
        assert snapshot_view(build_snapshot(par.objects, dialect_for(release))) == snapshot_view(
            build_snapshot(_load(path, 1).objects, dialect_for(release))
        )


@pytest.mark.parametrize("seed", [1, 2])
def test_varied_cluster(tmp_path: Path, seed: int) -> None:
    _assert_same(_write(tmp_path, _admitted(varied_items(12, 4, 5, seed))))


def test_hand_made_cluster_keys_in_written_order(tmp_path: Path) -> None:
    # Taints, priority classes, volumes, init containers, statuses of several shapes; keys not sorted.
    _assert_same(_write(tmp_path, cluster_items(), sort_keys=False), compact=False)
    _assert_same(_write(tmp_path, _admitted(cluster_items()), sort_keys=False))


def test_keys_that_are_not_strings_are_made_strings_with_workers(tmp_path: Path) -> None:
    """The workers parse a batch with its keys as the parser made them and write it as JSON (which refuses
    a key that is not a string): a batch with an integer, boolean or null key is parsed again with its keys
    made strings, and gives the objects and the snapshot one process gives."""
    items = _admitted(varied_items(12, 4, 5, 6))
    path = _write(tmp_path, items)
    text = path.read_text()
    # Keys YAML reads as an integer, a boolean and null: in a bound pod's labels and a node's labels.
    pod = text.rindex("- apiVersion: v1\n  kind: Pod\n", 0, text.index("    nodeName:"))
    labels = text.index("    labels:\n", pod) + len("    labels:\n")
    text = text[:labels] + "      7: seven\n      true: yes-key\n      null: none\n" + text[labels:]
    labels = text.index("    labels:\n", text.index("  kind: Node\n")) + len("    labels:\n")
    text = text[:labels] + "      42: answer\n" + text[labels:]
    path.write_text(text)
    _assert_same(path)
    loaded = _load(path, 2)
    found = [r.obj.get("metadata", {}).get("labels") or {} for r in loaded.objects]
    assert any("42" in x for x in found) and any({"7", "true", "null"} <= x.keys() for x in found)


def test_an_integer_past_64_bits_is_parsed_by_the_parent(tmp_path: Path) -> None:
    items = _admitted(varied_items(6, 3, 2, 3))
    odd = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"n": 2**70}}
    path = _write(tmp_path, [*items[:20], odd, *items[20:]])
    serial = _load(path, 1)
    UNPACKED.clear()
    par = _load(path, 2)
    assert _view(par) == _view(serial)
    assert any(r.obj.get("kind") == "Widget" and r.obj["spec"]["n"] == 2**70 for r in par.objects)
    # Every object is there although one batch never came back from a worker packed.
    assert 0 < sum(UNPACKED) < len(par.objects)


def test_a_batch_that_does_not_parse_alone_takes_the_whole_file_path(tmp_path: Path) -> None:
    # An anchor in one item and its alias in a later one: no batch parses alone; files.py decodes the
    # whole file (aliases are expanded there), with workers or without.
    items = _admitted(varied_items(6, 3, 2, 4))
    path = _write(tmp_path, items)
    parallel.set_jobs(1)
    UNPACKED.clear()
    text = path.read_text()
    text = text.replace("- apiVersion: v1\n", "- apiVersion: &v v1\n", 1)
    head, sep, tail = text.rpartition("- apiVersion: v1\n")
    assert sep and "&v" in head
    path.write_text(head + "- apiVersion: *v\n" + tail)
    serial = _load(path, 1)
    par = _load(path, 2)
    assert _view(par) == _view(serial)
    assert len(par.objects) == len(items)
    assert not stream_yaml.load_yaml_list(path, str(path), LoadResult())


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param("  kind: Node\n", "  kind: Node\n  extra: .nan\n", id="nan"),
        pytest.param(
            "  kind: Node\n", "  kind: Node\n  extra: " + "9" * 1200 + "\n", id="a 1,200-digit integer"
        ),
    ],
)
def test_a_value_out_of_limits_is_the_same_error_with_workers(tmp_path: Path, old: str, new: str) -> None:
    """A batch whose check fails in a worker sends the file to files.py, which reports it as one process
    does (the file, the document's place, the field)."""
    path = _write(tmp_path, _admitted(varied_items(6, 3, 2, 5)))
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    errors = []
    for jobs in (1, 2):
        with pytest.raises(InputError) as e:
            _load(path, jobs)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert "items[" in errors[0] and ".extra: " in errors[0], errors[0]
