"""Loaders: every accepted layout, and every bad input as one line naming the file, exit code 3."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app
from kdiagnose.errors import InputError
from kdiagnose.load.dump import load_snapshot
from kdiagnose.load.files import load_paths
from kdiagnose.load.parse import _decode_yaml, _decode_yaml_pyyaml, _doc_starts
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.recorded import recorded_for
from kdiagnose.versions import dialect_for

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
V134 = dialect_for("v1.34.1")

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


def pod_obj(name: str, ns: str = "default", node: str = "", cpu: str = "100m") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
        "status": {},
    }


def run(args: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, args, input=stdin)
    return result.exit_code, result.stdout, result.stderr


# ---------------------------------------------------------------------------------------------- bad input

BAD_INPUTS: list[Any] = [
    pytest.param(
        "truncated.yaml",
        b"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: b\n",
        ["document 2", "line", "invalid YAML"],
        id="a truncated YAML names the document and line",
    ),
    pytest.param(
        "truncated.json",
        b'{"kind": "Pod", "metadata": {"name": ',
        ["invalid JSON"],
        id="a truncated JSON file",
    ),
    pytest.param("binary.yaml", b"\x7fELF\x00\x01\x02\x00\x00garbage", ["binary file"], id="a binary file"),
    pytest.param(
        "latin1.yaml",
        b"kind: Node\nmetadata: {name: caf\xe9}\n",
        ["not UTF-8"],
        id="a file that is not UTF-8",
    ),
    pytest.param(
        "quantity.yaml",
        b"apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\nspec:\n  containers:\n"
        b"  - name: app\n    image: nginx\n    resources: {requests: {cpu: lots}}\n",
        ["Pod shop/web", "spec.containers[0].resources.requests.cpu", "lots"],
        id="an invalid quantity names the object and the field",
    ),
    pytest.param(
        "nodequantity.yaml",
        b"kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {memory: 8GB}}\n",
        ["Node n1", "status.allocatable.memory"],
        id="an invalid node quantity names the node and the field",
    ),
    pytest.param("empty.yaml", b"", ["no Kubernetes objects"], id="an empty file"),
    pytest.param(
        "comments.yaml", b"# nothing here\n---\n", ["no Kubernetes objects"], id="a file of comments only"
    ),
    pytest.param(
        "nokind.yaml",
        b"replicas: 3\nimage: nginx\n",
        ["no Kubernetes objects"],
        id="a YAML file without any kind",
    ),
    pytest.param(
        "scalar.yaml",
        b"kind: Node\nmetadata: {name: n1}\n---\njust a string\n",
        ["document 2", "not a Kubernetes object"],
        id="a scalar document",
    ),
    pytest.param(
        "noname.yaml",
        b"kind: Pod\nmetadata: {namespace: default}\nspec: {}\n",
        ["Pod without metadata.name"],
        id="an object without metadata.name",
    ),
    pytest.param(
        "broken.tgz", b"this is not an archive at all", ["cannot read archive"], id="a corrupt tarball"
    ),
]


@pytest.mark.parametrize(("name", "data", "fragments"), BAD_INPUTS)
def test_bad_input_is_one_line_naming_the_file_and_exit_3(
    tmp_path: Path, name: str, data: bytes, fragments: list[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    code, out, err = run(["diagnose", str(path)])
    assert code == 3, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("kdiagnose: error: ")
    assert str(path) in lines[0]
    for f in fragments:
        assert f in lines[0]
    assert "Traceback" not in err


def test_directory_without_objects_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / "ns").mkdir()
    (tmp_path / "ns" / "logs.txt").write_text("log line\n")
    code, _, err = run(["diagnose", str(tmp_path)])
    assert code == 3
    assert err.count("\n") == 1 and "no Kubernetes objects" in err and str(tmp_path) in err


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    code, _, err = run(["diagnose", str(tmp_path / "nope.yaml")])
    assert code == 3 and "no such file or directory" in err


# ---------------------------------------------------------------------------------------------- good input

GOLDEN_YAML = sorted(p for p in FIXTURES.glob("golden*/**/*.yaml"))


@pytest.mark.parametrize("path", GOLDEN_YAML, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_golden_scenario_loads(path: Path) -> None:
    snap, _ = load_snapshot([str(path)], V134)
    if not path.name.endswith(".config.yaml"):
        assert snap.num_nodes + len(snap.pods) > 0 or "zero-nodes" in path.name


def test_demo_dump_loads() -> None:
    snap, _ = load_snapshot([str(FIXTURES / "demo" / "cluster.yaml")], V134)
    assert snap.num_nodes == 5
    assert sorted(p.key for p in snap.pending) == ["default/hello-web-new", "default/hello-web-small"]


def _cluster_info_dump(root: Path, namespaces: list[str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "nodes.json").write_text(
        json.dumps(
            {
                "kind": "NodeList",
                "apiVersion": "v1",
                "items": [{k: v for k, v in NODE.items() if k != "kind"}],
            }
        )
    )
    for ns in namespaces:
        d = root / ns
        d.mkdir()
        items = [{k: v for k, v in pod_obj(f"{ns}-pod", ns, "n1").items() if k not in ("kind", "apiVersion")}]
        (d / "pods.json").write_text(json.dumps({"kind": "PodList", "apiVersion": "v1", "items": items}))
        (d / "replicasets.json").write_text(
            json.dumps({"kind": "ReplicaSetList", "apiVersion": "apps/v1", "items": []})
        )
        events = {
            "kind": "EventList",
            "apiVersion": "v1",
            "items": [
                {
                    "metadata": {"name": f"{ns}-pod.1", "namespace": ns},
                    "involvedObject": {"kind": "Pod", "namespace": ns, "name": f"{ns}-pod"},
                    "reason": "Scheduled",
                    "message": "ok",
                }
            ],
        }
        (d / "events.json").write_text(json.dumps(events))
        (d / f"{ns}-pod").mkdir()
        (d / f"{ns}-pod" / "logs.txt").write_text("==== START logs ====\nnot json\n")


def test_cluster_info_dump_directory_without_all_namespaces_warns(tmp_path: Path) -> None:
    _cluster_info_dump(tmp_path / "dump", ["default", "kube-system"])
    snap, result = load_snapshot([str(tmp_path / "dump")], V134)
    assert snap.num_nodes == 1
    assert sorted(p.key for p in snap.pods) == ["default/default-pod", "kube-system/kube-system-pod"]
    assert len(snap.kind("Event")) == 2
    assert snap.has("ReplicaSet") and snap.kind("ReplicaSet") == []
    assert result.cluster_info_dumps == {str(tmp_path / "dump"): ["default", "kube-system"]}
    assert any("--all-namespaces" in w and "cluster-info dump" in w for w in snap.warnings)


def test_cluster_info_dump_with_all_namespaces_does_not_warn(tmp_path: Path) -> None:
    _cluster_info_dump(tmp_path / "dump", ["default", "kube-node-lease", "kube-public", "kube-system"])
    snap, _ = load_snapshot([str(tmp_path / "dump")], V134)
    assert len(snap.pods) == 4
    assert not any("cluster-info dump" in w for w in snap.warnings)


def test_tarball_of_a_cluster_info_dump(tmp_path: Path) -> None:
    _cluster_info_dump(tmp_path / "dump", ["default", "kube-system"])
    archive = tmp_path / "dump.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "dump", arcname="dump")
    result = load_paths([str(archive)])
    kinds = sorted(str(r.obj["kind"]) for r in result.objects)
    assert kinds == ["Event", "Event", "Node", "Pod", "Pod"]
    assert all(r.source.startswith(f"{archive}:dump/") for r in result.objects)
    assert list(result.cluster_info_dumps.values()) == [["default", "kube-system"]]


def test_stdin_and_gzip(tmp_path: Path) -> None:
    text = json.dumps(NODE) + "\n" + json.dumps(pod_obj("p"))
    result = load_paths(["-"], stdin=io.BytesIO(text.encode()))
    assert [r.obj["kind"] for r in result.objects] == ["Node", "Pod"]
    assert result.objects[0].source == "<stdin>"
    gz = tmp_path / "dump.yaml.gz"
    gz.write_bytes(gzip.compress(b"kind: Node\nmetadata: {name: n1}\n"))
    assert [r.obj["metadata"]["name"] for r in load_paths([str(gz)]).objects] == ["n1"]


def test_stdin_through_the_cli_reads_a_dump() -> None:
    doc = "---\n".join(json.dumps(o) + "\n" for o in (NODE, pod_obj("p")))
    code, out, err = run(["diagnose", "-", "-o", "json"], stdin=doc)
    assert code in (0, 1), err
    assert json.loads(out)["pods"][0]["pod"] == "default/p"


def test_json_stream_with_interleaved_container_logs() -> None:
    # `kubectl cluster-info dump` to stdout: Lists, then logs between START/END markers.
    text = (
        json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": [NODE]})
        + "\n==== START logs for container c of pod default/p ====\nhello {not json}\n"
        + "==== END logs for container c of pod default/p ====\n"
        + json.dumps({"kind": "PodList", "apiVersion": "v1", "items": [pod_obj("p")]})
    )
    result = load_paths(["-"], stdin=io.BytesIO(text.encode()))
    assert [r.obj["kind"] for r in result.objects] == ["Node", "Pod"]


def test_typed_list_items_get_their_kind_and_lists_mark_presence(tmp_path: Path) -> None:
    f = tmp_path / "pv.yaml"
    f.write_text(
        "apiVersion: v1\nkind: PersistentVolumeList\nitems: []\n---\nkind: NodeList\nitems:\n- metadata: {name: n1}\n"
    )
    result = load_paths([str(f)])
    snap = build_snapshot(result.objects, V134, list_kinds=result.list_kinds)
    assert snap.has("PersistentVolume") and snap.kind("PersistentVolume") == []
    assert not snap.has("StorageClass")
    assert [ni.name for ni in snap.node_infos] == ["n1"]


def test_unknown_kinds_are_counted_and_skipped(tmp_path: Path) -> None:
    f = tmp_path / "mixed.yaml"
    f.write_text("kind: Widget\nmetadata: {name: w}\n---\nkind: Widget\n---\n" + json.dumps(NODE) + "\n")
    snap, _ = load_snapshot([str(f)], V134)
    assert snap.skipped["Widget"] == 2
    assert snap.num_nodes == 1


def test_both_event_apis_are_loaded_and_give_the_recorded_message(tmp_path: Path) -> None:
    core = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "p.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
        "reason": "FailedScheduling",
        "message": "0/1 nodes are available: old.",
        "count": 3,
        "lastTimestamp": "2025-01-01T00:00:00Z",
    }
    new = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "p.2", "namespace": "default"},
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
        "reason": "FailedScheduling",
        "note": "0/1 nodes are available: new.",
        "series": {"count": 5, "lastObservedTime": "2025-01-02T00:00:00Z"},
    }
    f = tmp_path / "events.yaml"
    f.write_text("\n---\n".join(json.dumps(o) for o in (NODE, pod_obj("p"), core, new)))
    snap, _ = load_snapshot([str(f)], V134)
    assert len(snap.kind("Event")) == 2
    rec = recorded_for(snap, snap.pending[0], "0/1 nodes are available: new.")
    assert rec is not None
    assert (rec.message, rec.count, rec.agrees) == ("0/1 nodes are available: new.", 5, True)


# ---------------------------------------------------------------------------------------------- YAML semantics

SEMANTICS = """\
base: &base {cpu: 1e3, flag: yes}
obj:
  <<: *base
  memory: 1Gi
  stamp: "2025-01-01T00:00:00Z"
  bare: 2025-01-01T00:00:00Z
  dup: 1
  dup: 2
"""


@pytest.mark.parametrize(
    "decoder", [pytest.param("yaml-rs", id="yaml-rs"), pytest.param("pyyaml", id="PyYAML fallback")]
)
def test_yaml_loaders_agree_on_kubernetes_relevant_semantics(decoder: str) -> None:
    if decoder == "yaml-rs":
        docs, _ = _decode_yaml(SEMANTICS, "t.yaml")
    else:
        docs = _decode_yaml_pyyaml(SEMANTICS, "t.yaml", [1])
    obj = docs[0]["obj"]
    assert obj["memory"] == "1Gi"
    assert obj["flag"] == "yes"  # YAML 1.2: not a boolean
    assert obj["stamp"] == "2025-01-01T00:00:00Z"
    assert obj["bare"] == "2025-01-01T00:00:00Z"
    assert obj["dup"] == 2  # the last duplicate wins, as in the API server
    assert float(obj["cpu"]) == 1000.0  # merge key expanded; 1e3 is a number


def test_yaml_quantity_written_as_exponent_is_exact(tmp_path: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 1e3, memory: 5e8}}\n"
    )
    snap, _ = load_snapshot([str(f)], V134)
    assert snap.pending[0].requests == {"cpu": 1_000_000, "memory": 500_000_000}


def test_document_start_lines() -> None:
    assert _doc_starts("# c\n---\na: 1\n---\nb: 2\n") == [2, 4]
    assert _doc_starts("a: 1\n---\nb: 2\n") == [1, 2]


def test_errors_raise_input_error_not_tracebacks(tmp_path: Path) -> None:
    f = tmp_path / "x.yaml"
    f.write_text("kind: Node\nmetadata:\n  name: [unterminated\n")
    with pytest.raises(InputError, match=r"x\.yaml.*line 3"):
        load_paths([str(f)])
