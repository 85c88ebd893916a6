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

import msgspec
import pytest

from kdiagnose.errors import InputError
from kdiagnose.load import fast, stream_json
from kdiagnose.load.admission import AdmissionContext, admit_pod
from kdiagnose.load.files import load_paths
from kdiagnose.load.raw import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.objects import SPEC_SLOTS, Pod, pod_from_parts
from kdiagnose.versions import dialect_for
from tests.test_fast_loaders import cluster_items, snapshot_view
from tests.varied import varied_items

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
        expected = stream_json.slim_pod(stream_json._ITEM.decode(json.dumps(item).encode()))
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


# ---------------------------------------------------------------------------------------------- fast rows


def _rows_both_ways(items: list[dict[str, Any]]) -> tuple[int, int]:
    """For every bound pod item: the row fast_bound_pod computes from the typed decode equals the row of
    the general way (metadata and status as dicts, validate_pod_parts, pod_from_parts, row_from_pod), and
    the Pod built lazily from it (pod_from_row) equals Pod() of the per-object dict, slot by slot.
    Returns (fast rows, general rows)."""
    from kdiagnose.load.compact import (
        BatchSource,
        BoundPod,
        FastItem,
        RawItem,
        TemplateTable,
        bound_pod_or_none,
        fast_bound_pod,
        template_pod,
    )

    fast_rows = general_rows = 0
    for item in items:
        if item.get("kind") != "Pod" or not (item.get("spec") or {}).get("nodeName"):
            continue
        data = json.dumps(item).encode()
        where = BatchSource(None, data, 0, len(data), None)
        got = fast_bound_pod(msgspec.json.decode(data, type=FastItem), TemplateTable(), where, 0)
        general = bound_pod_or_none(msgspec.json.decode(data, type=RawItem), TemplateTable(), where, 0)
        if got is False:
            assert general is None or template_pod(general.template) is None
            continue
        assert general is not None
        if got is True:
            general_rows += 1
            continue
        assert isinstance(got, BoundPod)
        fast_rows += 1
        assert got.row == general.row
        assert got.template.key == general.template.key
        lazy = got.pod()
        assert lazy is not None
        obj = got.to_obj()
        admit_pod(obj, AdmissionContext([], [], [], []), [])  # the decode-time defaults template_pod applies
        eager = Pod(obj)
        for slot in Pod.__slots__:
            assert getattr(lazy, slot) == getattr(eager, slot), (item["metadata"]["name"], slot)
    return fast_rows, general_rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fast_rows_equal_the_general_way_on_varied_clusters(seed: int) -> None:
    items = _admitted(varied_items(20, 8, 10, seed))
    fast_rows, general_rows = _rows_both_ways(items)
    assert fast_rows >= 150 and general_rows == 0  # the usual shape always takes the fast way


def test_fast_rows_equal_the_general_way_on_edge_pods() -> None:
    odd = copy.deepcopy(EDGE_PODS[0])
    odd["metadata"].update(name="odd", labels={"n": 1, "b": True, "none": None})
    owned = copy.deepcopy(EDGE_PODS[0])
    owned["metadata"]["name"] = "owned"
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u", "controller": None},
        {"kind": "Node", "name": "n", "blockOwnerDeletion": True},
    ]
    owned["metadata"]["deletionTimestamp"] = None
    owned["status"].update(
        nominatedNodeName=None,
        conditions=[{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "False"}],
        containerStatuses=[
            {"name": "app", "state": {"waiting": {"reason": "ErrImagePull", "message": " x "}}}
        ],
        initContainerStatuses=[{"name": "init", "state": {"waiting": {}}}],
    )
    fast_rows, general_rows = _rows_both_ways([*EDGE_PODS, odd, owned])
    # "resized" and "resized-ok" (status resources) and "odd" (labels that are not strings) take the
    # general way.
    assert general_rows == 3 and fast_rows >= 10


def test_a_file_changed_since_it_was_read_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, [*_nodes(), *EDGE_PODS])
    loaded = load_paths([str(path)])
    rec = next(r for r in loaded.objects if r.compact is not None)
    path.write_text(path.read_text() + "\n")
    with pytest.raises(InputError, match="changed while kdiagnose was reading it"):
        _ = rec.obj


# ---------------------------------------------------------------------------------------------- fields kept


def test_bound_pods_keep_what_node_declared_features_reads_on_every_path(tmp_path: Path) -> None:
    """hostUsers, restartPolicyRules and volumeMounts[].bindMountOptions (NodeDeclaredFeatures, read of
    the pod being placed, which `--pod` can name even when it is bound) are kept by the small-file path
    (load/trim.py), the streamed compact path and the streamed per-object path alike."""
    pod = _bound(
        "features",
        hostNetwork=True,
        hostUsers=False,
        containers=[
            {
                "name": "app",
                "image": "i",
                "restartPolicyRules": [{"action": "RestartAllContainers", "exitCodes": {"operator": "In"}}],
                "volumeMounts": [
                    {"name": "d", "mountPath": "/d", "bindMountOptions": ["rbind"]},
                    {"name": "e", "mountPath": "/e"},
                ],
            }
        ],
        initContainers=[{"name": "init", "image": "i", "volumeMounts": [{"name": "e", "mountPath": "/e"}]}],
    )
    streamed = _write(tmp_path, [*_nodes(), pod])
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*_nodes(), pod]}))
    for release in ("v1.36.5", "v1.37.2"):
        dialect = dialect_for(release)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(fast, "FAST_MIN_BYTES", 1 << 40)
            per_object = build_snapshot(load_paths([str(small)]).objects, dialect).pods[0]
        loaded = load_paths([str(streamed)])
        assert loaded.objects[-1].compact is not None
        compact = build_snapshot(loaded.objects, dialect).pods[0]
        expanded = build_snapshot(_per_object(load_paths([str(streamed)]).objects), dialect).pods[0]
        for p in (per_object, compact, expanded):
            assert p.host_users is False and p.host_network
            assert p.containers[0].restart_all_containers
            # VolumeBindMountOptions is off in every release (versions.py): the API server drops the field.
            assert not p.containers[0].bind_mount_options
        for slot in Pod.__slots__:
            assert getattr(compact, slot) == getattr(per_object, slot) == getattr(expanded, slot), slot
    obj = loaded.objects[-1].obj
    assert obj["spec"]["hostUsers"] is False
    assert obj["spec"]["containers"][0]["volumeMounts"] == [{"name": "d", "bindMountOptions": ["rbind"]}]
    assert "volumeMounts" not in obj["spec"]["initContainers"][0]
