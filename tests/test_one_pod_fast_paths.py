"""The fast paths of a big dump's one-pod diagnosis (issue #17) against their plain forms: the platform
index by image set computed once per spec, API-server timestamps read without regular expressions, the
parallel loader modelling the specs while the workers decode."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.load import fast, parallel, stream_json
from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.recorded import _parse_time_general, parse_time
from kdiagnose.remedies.safety import _platforms_by_images, platform_of
from kdiagnose.versions import dialect_for
from tests.varied import varied_items


def _items(seed: int) -> list[dict[str, Any]]:
    items = varied_items(40, 6, 10, seed)
    nodes = [o for o in items if o["kind"] == "Node"]
    for i, node in enumerate(nodes):
        labels = node["metadata"]["labels"]
        if i % 3 == 1:
            labels["kubernetes.io/arch"] = "arm64"
        elif i % 3 == 2:
            labels.pop("kubernetes.io/arch", None)
            labels.pop("kubernetes.io/os", None)  # a node that says neither: left out of the index
    pods = [o for o in items if o["kind"] == "Pod" and o["spec"].get("nodeName")]
    for i, pod in enumerate(pods):
        if i % 7 == 0:
            pod["spec"].setdefault("initContainers", []).append({"name": "init", "image": f"busybox:{i % 2}"})
    return items


def _streamed(tmp_path: Path, items: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> Snapshot:
    """The streamed load, whose bound pods share their spec's container lists."""
    monkeypatch.setattr(fast, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(stream_json, "BLOCK_SIZE", 3000)
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, indent=4))
    parallel.set_jobs(1)
    try:
        loaded = load_paths([str(path)])
    finally:
        parallel.set_jobs(None)
    assert any(r.compact is not None for r in loaded.objects)
    return build_snapshot(loaded.objects, dialect_for("v1.34.1"))


def _plain_platforms(snap: Snapshot) -> dict[tuple[str, ...], set[tuple[str, str]]]:
    out: dict[tuple[str, ...], set[tuple[str, str]]] = {}
    for ni in snap.node_infos:
        labels = ni.node.labels
        plat = (labels.get("kubernetes.io/os", ""), labels.get("kubernetes.io/arch", ""))
        if plat == ("", ""):
            continue
        for p in ni.pods:
            imgs = tuple(sorted({c.image for c in [*p.init_containers, *p.containers]}))
            if imgs:
                out.setdefault(imgs, set()).add(plat)
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_platforms_by_images_once_per_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    items = _items(seed)
    snap = _streamed(tmp_path, items, monkeypatch)
    specs = {id(p.containers) for p in snap.pods if p.node_name}
    assert len(specs) < len([p for p in snap.pods if p.node_name])  # replicas do share their lists
    assert {platform_of(ni.node) for ni in snap.node_infos} >= {("linux", "amd64"), ("linux", "arm64")}
    got = _platforms_by_images(snap)
    assert got == _plain_platforms(snap)
    assert any(len(v) == 2 for v in got.values())  # an image set seen on both architectures
    # The per-object load (no shared lists) gives the same index.
    from kdiagnose.load.files import RawObject

    plain = build_snapshot([RawObject(o, "x.json") for o in items], dialect_for("v1.34.1"))
    assert _platforms_by_images(plain) == got


@pytest.mark.parametrize(
    "text",
    [
        "2026-12-02T13:04:05Z",
        "1970-01-01T00:00:00Z",
        "2024-02-29T23:59:59Z",
        "2023-02-29T10:00:00Z",  # no such day: unreadable either way
        "2026-13-02T13:04:05Z",
        "2026-12-02T24:00:00Z",
        "2026-12-02T23:59:60Z",  # a leap second: fromisoformat refuses it
        "٢٠٢٦-12-02T13:04:05Z",  # other scripts' digits match \d in both ways
        "2026-12-02T13:04:05.123456789Z",
        "2026-12-02T13:04:05+02:00",
        "2026-12-02 13:04:05.5 +0000 UTC",
        " 2026-12-02T13:04:05Z ",
        "2026-12-02T13:04:05z",
        "",
        "   ",
    ],
)
def test_parse_time_fast_form_equals_general(text: str) -> None:
    assert parse_time(text) == _parse_time_general(text)


def test_parse_time_fast_form_values() -> None:
    assert parse_time("2026-12-02T13:04:05Z") == datetime(2026, 12, 2, 13, 4, 5, tzinfo=UTC).timestamp()
    assert parse_time("2026-13-02T13:04:05Z") is None
    assert parse_time(None) is None and parse_time(5) is None


def test_parallel_load_models_the_specs_while_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fast, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(stream_json, "BLOCK_SIZE", 3000)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "MIN_RANGE_BYTES", 1500)
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "items": _items(3), "kind": "List"}, indent=4))
    parallel.set_jobs(2)
    try:
        loaded = load_paths([str(path)])
    finally:
        parallel.set_jobs(None)
    templates = [r.compact.template for r in loaded.objects if r.compact is not None]
    assert templates
    # Modelled when their range came back (load/wire.py unpack), not left to build_snapshot.
    assert all(t.model is not False for t in templates)


def _features_pod(i: int, nodes: list[str]) -> dict[str, Any]:
    """A bound pod whose mounts have bindMountOptions, which every release's API server drops
    (versions.py): its release template differs from the release-independent model."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"features-{i}", "namespace": "default", "uid": f"u-features-{i}"},
        "spec": {
            "nodeName": nodes[i % 2],
            "priority": 0,
            "containers": [
                {
                    "name": "app",
                    "image": "i",
                    "resources": {"requests": {"cpu": "100m"}},
                    "volumeMounts": [{"name": "d", "mountPath": "/d", "bindMountOptions": ["rbind"]}],
                }
            ],
        },
        "status": {"phase": "Running"},
    }


@pytest.mark.parametrize("release", ["v1.31.8", "v1.33.3", "v1.34.1", "v1.37.2"])
def test_pods_built_ahead_equal_the_snapshots_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str
) -> None:
    """The parallel loader builds each bound pod from its spec's model while the workers decode
    (BoundPod.pre); build_snapshot takes it only when the release template has the model's spec slots,
    and the snapshot equals the one-process load's, pod by pod and slot by slot, in every release."""
    from tests.test_fast_loaders import snapshot_view

    monkeypatch.setattr(fast, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(stream_json, "BLOCK_SIZE", 3000)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "MIN_RANGE_BYTES", 1500)
    items = _items(4)
    names = sorted(o["metadata"]["name"] for o in items if o["kind"] == "Node")
    items += [_features_pod(i, names) for i in range(6)]
    items.append(items[-1])  # one pod twice: the second is dropped, and its pod built ahead with it
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, indent=4))
    dialect = dialect_for(release)
    try:
        parallel.set_jobs(1)
        serial = build_snapshot(load_paths([str(path)]).objects, dialect)
        parallel.set_jobs(2)
        loaded = load_paths([str(path)])
    finally:
        parallel.set_jobs(None)
    recs = [r.compact for r in loaded.objects if r.compact is not None]
    assert recs and all(rec.pre is not None for rec in recs)
    ahead = {id(rec.pre): rec.pre for rec in recs if rec.pre is not None}  # kept alive: ids not reused
    snap = build_snapshot(loaded.objects, dialect)
    assert snapshot_view(snap) == snapshot_view(serial)
    assert all(rec.pre is None for rec in recs)  # none kept alive by the load result
    taken = [p for p in snap.pods if id(p) in ahead]
    features = [p for p in snap.pods if p.name.startswith("features-")]
    assert len(features) == 6 and not any(id(p) in ahead for p in features)  # release template differs
    assert not any(p.containers[0].bind_mount_options for p in features)
    if dialect.dra_enabled and dialect.pod_level_resources:
        assert len(taken) == len([p for p in snap.pods if p.node_name]) - 6
