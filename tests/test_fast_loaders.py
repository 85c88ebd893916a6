"""The fast loaders (streamed JSON/YAML Lists, yaml-rs) build the same snapshot as the fallbacks."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kdiagnose.errors import InputError
from kdiagnose.load import fast, stream_json, stream_yaml
from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.versions import dialect_for

GOLDEN = Path(__file__).resolve().parent.parent / "fixtures" / "golden"
DIALECT = dialect_for("v1.34.1")
# Volume sources the streaming loaders may drop from bound pods: no scheduler plugin reads them.
DROPPABLE_VOLUMES = {"configMap", "secret", "projected", "emptyDir", "downwardAPI"}


def _pod_view(pod: Any, *, normalize_volumes: bool) -> dict[str, Any]:
    out = {slot: getattr(pod, slot) for slot in type(pod).__slots__}
    if normalize_volumes and pod.node_name:
        out["volumes"] = [v for v in pod.volumes if not (set(v) - {"name"}) <= DROPPABLE_VOLUMES]
    return out


def _node_view(node: Any) -> dict[str, Any]:
    return {slot: getattr(node, slot) for slot in type(node).__slots__ if slot != "raw"}


def snapshot_view(snap: Snapshot, *, normalize_volumes: bool = False) -> dict[str, Any]:
    return {
        "pods": [_pod_view(p, normalize_volumes=normalize_volumes) for p in snap.pods],
        "nodes": [_node_view(ni.node) for ni in snap.node_infos],
        "requested": [
            (ni.requested, ni.non_zero_cpu, ni.non_zero_mem, ni.used_ports) for ni in snap.node_infos
        ],
        "kinds": {k: snap.kind(k) for k in ("PersistentVolumeClaim", "PriorityClass", "Namespace")},
        "warnings": snap.warnings,
    }


def _snapshot(path: Path) -> Snapshot:
    loaded = load_paths([str(path)])
    return build_snapshot(loaded.objects, DIALECT, list_kinds=loaded.list_kinds)


# ---------------------------------------------------------------------------------------------- yaml-rs


@pytest.mark.parametrize("scenario", sorted(GOLDEN.glob("*.yaml")), ids=lambda p: p.stem)
def test_yaml_rs_and_pyyaml_build_the_same_snapshot(scenario: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fast_snap = snapshot_view(_snapshot(scenario))
    monkeypatch.setitem(sys.modules, "yaml_rs", None)  # `import yaml_rs` now fails: PyYAML's loader runs
    slow_snap = snapshot_view(_snapshot(scenario))
    assert fast_snap == slow_snap


# ---------------------------------------------------------------------------------------------- a cluster


def _node(name: str, zone: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "a"},
        },
        "spec": extra.pop("spec", {}),
        "status": {
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "images": [{"names": ["nginx:1.27"], "sizeBytes": 50_000_000}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
        },
    }


def _pod(name: str, node: str | None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "containers": [
            {
                "name": "app",
                "image": "nginx:1.27",
                "env": [{"name": "SECRET", "value": "x"}],
                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
                "ports": [{"containerPort": 80, "hostPort": 8080}] if name.endswith("hostport") else [],
            }
        ],
        "volumes": [
            {"name": "cfg", "configMap": {"name": "cfg"}},
            {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
        ],
        **spec,
    }
    if node:
        body["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": f"uid-{name}",
            "labels": {"app": name.split("-")[0]},
            "annotations": {"note": "kept for pending pods"},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True}
            ],
        },
        "spec": body,
        "status": {
            "phase": "Running" if node else "Pending",
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "PodScheduled", "status": "True" if node else "False", "reason": "Unschedulable"},
            ],
            "containerStatuses": [
                {
                    "name": "app",
                    "ready": True,
                    "resources": {"requests": {"cpu": "300m"}},
                    "state": {"running": {}},
                }
            ],
        },
    }


def cluster_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        _node("n1", "a"),
        _node("n2", "b", spec={"taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]}),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "shop"},
            "spec": {"accessModes": ["ReadWriteOncePod"]},
        },
    ]
    for i in range(12):
        items.append(_pod(f"web-{i}", "n1" if i % 2 else "n2"))
    items.append(
        _pod("db-0-hostport", "n1", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
    )
    items.append(
        _pod(
            "side-0",
            "n2",
            initContainers=[{"name": "proxy", "image": "envoy", "restartPolicy": "Always", "resources": {}}],
            tolerations=[{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}],
        )
    )
    items.append(_pod("pending-0", None, priorityClassName="high"))
    items.append(
        _pod(
            "pending-1",
            None,
            affinity={
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app": "web"}},
                        }
                    ]
                }
            },
        )
    )
    return items


def _kubectl_list(items: list[dict[str, Any]], kind: str = "List") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"resourceVersion": ""}, "items": items}


@pytest.fixture
def streaming(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stream every file, in tiny blocks, so items straddle block boundaries."""
    monkeypatch.setattr(fast, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(stream_json, "BLOCK_SIZE", 700)
    monkeypatch.setattr(stream_yaml, "BLOCK_SIZE", 500)


def _fallback_view(tmp_path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps(doc))  # not indented: files.py decodes it whole
    return snapshot_view(_snapshot(flat), normalize_volumes=True)


@pytest.mark.parametrize(
    "dump",
    [
        pytest.param(
            lambda d: json.dumps(d, indent=4, sort_keys=True), id="kubectl layout: items before kind"
        ),
        pytest.param(lambda d: json.dumps(d, indent=4), id="json.dump layout: kind before items"),
    ],
)
@pytest.mark.usefixtures("streaming")
def test_streamed_json_list_builds_the_same_snapshot(tmp_path: Path, dump: Any) -> None:
    doc = _kubectl_list(cluster_items())
    path = tmp_path / "cluster.json"
    path.write_text(dump(doc))
    assert stream_json.load_json_list(path, str(path), _empty())
    assert snapshot_view(_snapshot(path), normalize_volumes=True) == _fallback_view(tmp_path, doc)


def _empty() -> Any:
    from kdiagnose.load.files import LoadResult

    return LoadResult()


@pytest.mark.usefixtures("streaming")
def test_streamed_json_trims_bound_pods_and_keeps_pending_pods_whole(tmp_path: Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(_kubectl_list(cluster_items()), indent=4, sort_keys=True))
    result = _empty()
    assert stream_json.load_json_list(path, str(path), result)
    by_name = {r.obj["metadata"]["name"]: r.obj for r in result.objects}
    bound = by_name["web-1"]
    assert "env" not in bound["spec"]["containers"][0]
    assert "volumes" not in bound["spec"]  # only a configMap and a projected token
    assert [c["type"] for c in bound["status"]["conditions"]] == ["PodScheduled"]
    assert by_name["db-0-hostport"]["spec"]["volumes"] == [
        {"name": "d", "persistentVolumeClaim": {"claimName": "data"}}
    ]
    pending = by_name["pending-0"]
    assert pending["spec"]["containers"][0]["env"] == [{"name": "SECRET", "value": "x"}]
    assert pending["metadata"]["annotations"] == {"note": "kept for pending pods"}
    assert "addresses" not in by_name["n1"]["status"]
    assert by_name["n1"]["metadata"]["annotations"]["team"] == "a"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(json.dumps(_kubectl_list([_pod("a", "n1")]), indent=2), id="two-space indent"),
        pytest.param(json.dumps(_kubectl_list([_pod("a", "n1")])), id="not indented"),
        pytest.param(json.dumps(_kubectl_list([]), indent=4), id="an empty List"),
        pytest.param(json.dumps([_pod("a", "n1")], indent=4), id="a bare array"),
        pytest.param(
            json.dumps(
                _kubectl_list([{k: v for k, v in _pod("a", "n1").items() if k != "kind"}], "PodList"),
                indent=4,
                sort_keys=True,
            ),
            id="a PodList whose kind follows items without a kind",
        ),
    ],
)
def test_other_json_layouts_are_left_to_the_whole_file_decoder(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    result = _empty()
    assert not stream_json.load_json_list(path, str(path), result)
    assert result.objects == [] and result.files == []


@pytest.mark.usefixtures("streaming")
def test_an_invalid_item_reports_the_whole_file_decoders_error(tmp_path: Path) -> None:
    text = json.dumps(_kubectl_list(cluster_items()), indent=4).replace('"name": "web-3"', '"name": web-3', 1)
    path = tmp_path / "broken.json"
    path.write_text(text)
    with pytest.raises(InputError, match=r"broken\.json \(line \d+\): invalid JSON"):
        load_paths([str(path)])


@pytest.mark.parametrize(
    "dump",
    [
        pytest.param(lambda d: yaml.safe_dump(d, sort_keys=True), id="kubectl layout: items before kind"),
        pytest.param(lambda d: yaml.safe_dump(d, sort_keys=False), id="items last"),
        pytest.param(
            lambda d: "---\n# a comment\n" + yaml.safe_dump(d, sort_keys=True), id="document marker"
        ),
    ],
)
@pytest.mark.usefixtures("streaming")
def test_streamed_yaml_list_builds_the_same_snapshot(tmp_path: Path, dump: Any) -> None:
    doc = _kubectl_list(cluster_items())
    path = tmp_path / "cluster.yaml"
    path.write_text(dump(doc))
    assert stream_yaml.load_yaml_list(path, str(path), _empty())
    assert snapshot_view(_snapshot(path), normalize_volumes=True) == _fallback_view(tmp_path, doc)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            "apiVersion: v1\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: a\nkind: List\n",
            id="indented sequence",
        ),
        pytest.param(
            "items:\n- &p {kind: Pod, metadata: {name: a}}\n- *p\nkind: List\n", id="an alias of an item"
        ),
        pytest.param(
            yaml.safe_dump(_kubectl_list([_pod("a", "n1")])) + "---\nkind: Namespace\nmetadata: {name: x}\n",
            id="two documents",
        ),
    ],
)
@pytest.mark.usefixtures("streaming")
def test_other_yaml_layouts_are_left_to_the_whole_file_decoder(
    tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(text)
    result = _empty()
    streamed = stream_yaml.load_yaml_list(path, str(path), result)
    monkeypatch.setattr(fast, "FAST_MIN_BYTES", 1 << 40)
    whole = [r.obj for r in load_paths([str(path)]).objects]
    if streamed:
        # Streaming may take such a file only when a batch parses alone, and must then agree.
        assert [r.obj for r in result.objects] == whole
    else:
        assert result.objects == [] and result.files == []


def _typed_list(kind: str, items: list[dict[str, Any]]) -> str:
    # `kubectl cluster-info dump` prints typed Lists: kind and apiVersion first, items without their own.
    bare = [{k: v for k, v in it.items() if k not in ("kind", "apiVersion")} for it in items]
    return json.dumps(
        {"kind": f"{kind}List", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": bare},
        indent=4,
    )


@pytest.mark.usefixtures("streaming")
def test_cluster_info_dump_directory_streams_typed_lists_to_the_same_snapshot(tmp_path: Path) -> None:
    items = cluster_items()
    dump = tmp_path / "dump"
    (dump / "shop").mkdir(parents=True)
    (dump / "nodes.json").write_text(_typed_list("Node", [i for i in items if i["kind"] == "Node"]))
    pods = [i for i in items if i["kind"] == "Pod"]
    (dump / "shop" / "pods.json").write_text(_typed_list("Pod", pods))
    others = [i for i in items if i["kind"] not in ("Node", "Pod")]
    (dump / "others.json").write_text(json.dumps(_kubectl_list(others), indent=4, sort_keys=True))
    assert stream_json.load_json_list(dump / "shop" / "pods.json", "pods.json", _empty())
    doc = _kubectl_list(items)
    assert snapshot_view(_snapshot(dump), normalize_volumes=True) == _fallback_view(tmp_path, doc)
