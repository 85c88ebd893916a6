"""Streamed bound pods held as compact records (load/compact.py) build the same snapshot as the per-object
path: every Pod field, every NodeInfo aggregate, every warning and every error message.

The per-object side is the same load with each record turned back into its dict (RawObject.obj) before
build_snapshot, which is exactly what the streaming loader produced before compact records existed; the
records themselves are checked to rebuild that dict (`to_obj` against stream_json's per-object decoder).
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.errors import InputError
from kdiagnose.load import fast, stream_json
from kdiagnose.load.files import load_paths
from kdiagnose.load.raw import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.objects import SPEC_SLOTS, Pod, pod_from_parts
from kdiagnose.versions import dialect_for
from tests.test_fast_loaders import cluster_items, snapshot_view

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "fixtures" / "golden"
# DRA off (v1.33), pod-level resources and sidecar sums differ across these; v1.37 is the newest.
RELEASES = ["v1.31.8", "v1.33.3", "v1.34.1", "v1.37.2"]


@pytest.fixture(autouse=True)
def streaming(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(stream_json, "BLOCK_SIZE", 4096)


def _write(tmp_path: Path, items: list[dict[str, Any]], name: str = "dump.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, indent=4))
    return path


def _per_object(objects: list[RawObject]) -> list[RawObject]:
    out = []
    for raw in objects:
        obj = raw.obj  # builds the dict of a compact record
        out.append(RawObject(copy.deepcopy(obj), raw.source, raw.doc_index, raw.line))
    return out


def _both(path: Path, release: str) -> tuple[Any, Any, int]:
    loaded = load_paths([str(path)])
    compact = sum(r.compact is not None for r in loaded.objects)
    slow_objects = _per_object(loaded.objects)
    loaded = load_paths([str(path)])
    dialect = dialect_for(release)
    fast_snap = build_snapshot(loaded.objects, dialect, list_kinds=loaded.list_kinds)
    slow_snap = build_snapshot(slow_objects, dialect, list_kinds=loaded.list_kinds)
    return fast_snap, slow_snap, compact


def _assert_same(path: Path, release: str, *, min_compact: int = 1) -> None:
    fast_snap, slow_snap, compact = _both(path, release)
    assert compact >= min_compact
    assert snapshot_view(fast_snap) == snapshot_view(slow_snap)
    assert [p.key for p in fast_snap.pending] == [p.key for p in slow_snap.pending]
    for a, b in zip(fast_snap.node_infos, slow_snap.node_infos, strict=True):
        assert [p.key for p in a.pods] == [p.key for p in b.pods]
        assert a.pvc_ref_counts == b.pvc_ref_counts
        assert [p.key for p in a.pods_with_affinity] == [p.key for p in b.pods_with_affinity]


def _admitted(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Bound pods as a live cluster returns them (spec.priority set), so their specs take the compact path."""
    out = copy.deepcopy(items)
    for o in out:
        if o.get("kind") == "Pod" and isinstance(o.get("spec"), dict) and o["spec"].get("nodeName"):
            o["spec"].setdefault("priority", 0)
            o.setdefault("status", {"phase": "Running"})
    return out


def _golden_items(case: Path) -> list[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fast, "FAST_MIN_BYTES", 1 << 40)
        return [copy.deepcopy(r.obj) for r in load_paths([str(case)]).objects]


# ---------------------------------------------------------------------------------------------- records


def test_records_rebuild_the_per_object_dicts(tmp_path: Path) -> None:
    path = _write(tmp_path, _admitted(cluster_items()))
    loaded = load_paths([str(path)])
    records = [r for r in loaded.objects if r.compact is not None]
    assert records
    raw_items = json.loads(path.read_text())["items"]
    by_name = {o["metadata"]["name"]: o for o in raw_items}
    for r in records:
        item = by_name[r.compact.meta["name"]]
        expected = stream_json._slim_pod(stream_json._ITEM.decode(json.dumps(item).encode()))
        assert r.obj == expected


def test_pod_from_parts_copies_every_spec_field() -> None:
    obj = {
        "metadata": {"name": "a", "namespace": "n"},
        "spec": {
            "nodeName": "n1",
            "priority": 5,
            "schedulerName": "s",
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
            "tolerations": [{"operator": "Exists"}],
            "hostNetwork": True,
            "hostUsers": False,
        },
        "status": {"phase": "Running"},
    }
    whole = Pod(obj)
    rebuilt = pod_from_parts(whole, obj["metadata"], "n1", obj["status"])
    assert set(SPEC_SLOTS) < set(Pod.__slots__)
    for slot in Pod.__slots__:
        assert getattr(rebuilt, slot) == getattr(whole, slot), slot


# ---------------------------------------------------------------------------------------------- snapshots


@pytest.mark.parametrize("release", RELEASES)
def test_cluster_items_same_snapshot(tmp_path: Path, release: str) -> None:
    _assert_same(_write(tmp_path, _admitted(cluster_items())), release)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_varied_dump_same_snapshot(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "gen.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "generate.py"),
            "--nodes",
            "40",
            "--pods-per-node",
            "12",
            "--pending",
            "30",
            "--varied",
            "--seed",
            str(seed),
            "--out",
            str(path),
        ],
        check=True,
    )
    for release in ("v1.33.3", "v1.37.2"):
        _assert_same(path, release, min_compact=400)


GOLDEN_CASES = sorted(GOLDEN.glob("*.yaml"))


@pytest.mark.parametrize("case", GOLDEN_CASES, ids=lambda p: p.stem)
def test_golden_cases_same_snapshot(tmp_path: Path, case: Path) -> None:
    items = _golden_items(case)
    if not any(o.get("kind") == "Pod" and (o.get("spec") or {}).get("nodeName") for o in items):
        pytest.skip("no bound pod")
    # As recorded (manifests, mostly not admitted) and as a live cluster would list them (admitted).
    _assert_same(_write(tmp_path, items, "as-is.json"), "v1.34.1", min_compact=0)
    _assert_same(_write(tmp_path, _admitted(items), "admitted.json"), "v1.34.1")


# ---------------------------------------------------------------------------------------------- edges


def _bound(name: str, node: str = "node-a", **spec: Any) -> dict[str, Any]:
    body = {
        "nodeName": node,
        "priority": 0,
        "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}],
    }
    body.update(spec)
    status = body.pop("status", {"phase": "Running"})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "uid": f"u-{name}", "labels": {"app": "x"}},
        "spec": body,
        "status": status,
    }


def _nodes() -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
        for n in ("node-a", "node-b")
    ]


EDGE_PODS: list[dict[str, Any]] = [
    _bound("plain-1"),
    _bound("plain-2", node="node-b"),
    _bound("not-admitted", priority=None),
    _bound("pcn", priority=None, priorityClassName="high"),
    _bound(
        "claims",
        resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}],
        status={"phase": "Running", "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "c"}]},
    ),
    _bound("pod-level", resources={"requests": {"cpu": "2"}, "limits": {"cpu": "2", "memory": "1Gi"}}),
    _bound(
        "resized",
        status={
            "phase": "Running",
            "conditions": [
                {"type": "PodResizePending", "status": "True", "reason": "Infeasible"},
                {"type": "Ready", "status": "True"},
            ],
            "containerStatuses": [
                {
                    "name": "app",
                    "resources": {"requests": {"cpu": "300m"}},
                    "allocatedResources": {"cpu": "200m"},
                }
            ],
        },
    ),
    _bound(
        "resized-ok",
        status={
            "phase": "Running",
            "containerStatuses": [{"name": "app", "resources": {"requests": {"cpu": "300m"}}}],
        },
    ),
    _bound(
        "waiting",
        status={
            "phase": "Pending",
            "containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "ImagePullBackOff"}}}],
        },
    ),
    _bound(
        "sidecar",
        initContainers=[
            {
                "name": "log",
                "image": "l",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "50m"}},
            }
        ],
    ),
    _bound(
        "hostport",
        hostNetwork=True,
        containers=[{"name": "a", "image": "i", "ports": [{"containerPort": 80}]}],
    ),
    _bound(
        "pvc",
        volumes=[
            {"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "e", "emptyDir": {}},
        ],
    ),
    _bound("limits-only", containers=[{"name": "a", "image": "i", "resources": {"limits": {"cpu": "1"}}}]),
    _bound("no-status"),
    _bound("done", status={"phase": "Succeeded"}),
    _bound("deleting"),
    _bound("dup"),
    _bound("dup", node="node-b"),
]
EDGE_PODS[-5].pop("status")  # no-status: the per-object form
EDGE_PODS[-3]["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
for _p in EDGE_PODS:
    if _p["spec"].get("priority", 0) is None:
        del _p["spec"]["priority"]


@pytest.mark.parametrize("release", RELEASES)
def test_edge_pods_same_snapshot(tmp_path: Path, release: str) -> None:
    items = [*_nodes(), *EDGE_PODS]
    _assert_same(_write(tmp_path, items), release, min_compact=10)
    rng = random.Random(7)
    shuffled = list(items)
    rng.shuffle(shuffled)
    _assert_same(_write(tmp_path, shuffled, "shuffled.json"), release, min_compact=10)


@pytest.mark.parametrize(
    ("spec", "status"),
    [
        pytest.param({"priority": 2**40}, None, id="priority out of int32"),
        pytest.param({"tolerations": [{"key": "", "operator": "Equal"}]}, None, id="bad toleration"),
        pytest.param(
            {"containers": [{"name": "a", "resources": {"requests": {"cpu": "-1"}}}]}, None, id="quantity"
        ),
        pytest.param({}, {"phase": 3}, id="status phase type"),
        pytest.param(
            {},
            {"containerStatuses": [{"name": "a", "resources": {"requests": {"cpu": "x"}}}]},
            id="status quantity",
        ),
    ],
)
def test_invalid_pods_fail_with_the_per_object_message(
    tmp_path: Path, spec: dict[str, Any], status: dict[str, Any] | None
) -> None:
    bad = _bound("bad", **spec)
    if status is not None:
        bad["status"] = status
    path = _write(tmp_path, [*_nodes(), _bound("ok-1"), bad, _bound("ok-2")])
    loaded = load_paths([str(path)])
    slow_objects = _per_object(loaded.objects)
    loaded = load_paths([str(path)])
    dialect = dialect_for("v1.34.1")
    with pytest.raises(InputError) as slow:
        build_snapshot(slow_objects, dialect)
    with pytest.raises(InputError) as fast_err:
        build_snapshot(loaded.objects, dialect)
    assert str(fast_err.value) == str(slow.value)
    assert "Pod shop/bad" in str(slow.value)


def test_metadata_labels_and_owners_come_from_each_pod(tmp_path: Path) -> None:
    a = _bound("a")
    b = _bound("b")
    b["metadata"]["labels"] = {"app": "y", "n": 1}
    b["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "controller": True}
    ]
    path = _write(tmp_path, [*_nodes(), a, b])
    loaded = load_paths([str(path)])
    assert {id(r.compact.template) for r in loaded.objects if r.compact is not None}.__len__() == 1
    snap = build_snapshot(loaded.objects, dialect_for("v1.34.1"))
    pods = {p.name: p for p in snap.pods}
    assert pods["a"].labels == {"app": "x"}
    assert pods["b"].labels == {"app": "y", "n": "1"}
    assert pods["b"].controller_ref() == {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "r",
        "controller": True,
    }
    assert pods["a"].containers is pods["b"].containers  # one spec, shared
