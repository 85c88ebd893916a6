"""Hostile input that used to give a silently different verdict: now an error naming the object and field.

Each case takes a small valid dump, gives one field the replay reads a type (or value) the API server
would reject, and expects exit 3 with one line naming the object and the field path.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kdiagnose.cli import app
from tests.test_hostile_cel import _docs as dra_docs

Obj = dict[str, Any]

NODE: Obj = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}
POD: Obj = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]},
}


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


def one_error(tmp_path: Path, docs: list[Obj], *needles: str) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    code, _, err = run(["diagnose", str(f), "-o", "json"])
    lines = err.splitlines()
    assert code == 3, err
    assert len(lines) == 1 and lines[0].startswith("kdiagnose: error:"), err
    assert "internal error" not in err
    for needle in needles:
        assert needle in err, err


def _dra(expression: str = "true") -> list[Obj]:
    return dra_docs(expression)


def _of(docs: list[Obj], kind: str) -> Obj:
    return next(d for d in docs if d["kind"] == kind)


def _claim_allocated(docs: list[Obj], node_selector: Any) -> list[Obj]:
    claim = _of(docs, "ResourceClaim")
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "g", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]
            },
            "nodeSelector": node_selector,
        },
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}],
    }
    return docs


def test_sanity_the_dra_base_schedules(tmp_path: Path) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(_dra()))
    assert run(["diagnose", str(f), "-o", "json"])[0] == 0


@pytest.mark.parametrize("selector", [["n1"], "n1", 5])
def test_claim_allocation_node_selector_of_the_wrong_type(tmp_path: Path, selector: Any) -> None:
    one_error(
        tmp_path,
        _claim_allocated(_dra(), selector),
        "ResourceClaim default/c",
        "status.allocation.nodeSelector",
    )


def test_claim_reserved_for_of_the_wrong_type(tmp_path: Path) -> None:
    docs = _claim_allocated(_dra(), None)
    _of(docs, "ResourceClaim")["status"]["reservedFor"] = "p"
    one_error(tmp_path, docs, "ResourceClaim default/c", "status.reservedFor")
    _of(docs, "ResourceClaim")["status"]["reservedFor"] = [{"resource": "pods", "name": "p", "uid": 7}]
    one_error(tmp_path, docs, "status.reservedFor[0].uid", "must be a string")


def test_claim_template_first_available_of_the_wrong_type(tmp_path: Path) -> None:
    docs = _dra()
    claim = _of(docs, "ResourceClaim")
    docs.remove(claim)
    docs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "g", "firstAvailable": "gpu"}]}}},
        }
    )
    _of(docs, "Pod")["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": "t"}]
    one_error(
        tmp_path, docs, "ResourceClaimTemplate default/t", "spec.spec.devices.requests[0].firstAvailable"
    )


@pytest.mark.parametrize(
    ("path", "value", "needle"),
    [
        pytest.param(("spec", "devices", 0, "attributes", "model"), {"int": {"x": 1}}, "attributes.model.int", id="int attribute a map"),
        pytest.param(("spec", "pool", "generation"), {"x": 1}, "spec.pool.generation", id="pool generation a map"),
        pytest.param(("spec", "devices", 0, "capacity"), {"memory": {"value": []}}, "capacity.memory", id="capacity a list"),
        pytest.param(("spec", "devices"), {"gpu-0": {}}, "spec.devices", id="devices a map"),
        pytest.param(("spec", "devices", 0, "allowMultipleAllocations"), "yes", "allowMultipleAllocations", id="allowMultipleAllocations a string"),
        pytest.param(("spec", "devices", 0, "consumesCounters"), [{"counterSet": "c", "counters": {"sms": {"value": "lots"}}}], "consumesCounters[0].counters.sms.value", id="consumed counter not a quantity"),
        pytest.param(("spec", "devices", 0, "capacity"), {"bw": {"value": "1", "requestPolicy": {"validValues": [{"x": 1}]}}}, "requestPolicy.validValues[0]", id="validValues entry a map"),
        pytest.param(("spec", "devices", 0, "capacity"), {"bw": {"value": "1", "requestPolicy": {"validRange": {"min": []}}}}, "validRange.min", id="validRange min a list"),
        pytest.param(("spec", "sharedCounters"), [{"name": "c", "counters": {"sms": []}}], "sharedCounters[0].counters.sms", id="shared counter a list"),
    ],
)  # fmt: skip
def test_resource_slice_wrong_types_reach_no_allocator(
    tmp_path: Path, path: tuple[Any, ...], value: Any, needle: str
) -> None:
    docs = _dra()
    target: Any = _of(docs, "ResourceSlice")
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    one_error(tmp_path, docs, "ResourceSlice n1-gpu", needle)


def _storage(**extra: Any) -> list[Obj]:
    pod = copy.deepcopy(POD)
    pod["spec"]["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"storageClassName": "fast", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Pending"},
    }  # fmt: skip
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "fast"},
        "provisioner": "csi.example.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    driver = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": "csi.example.com"},
        "spec": {},
    }
    csinode = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": "n1"},
        "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1", "allocatable": {"count": 10}}]},
    }
    return [NODE, pod, pvc, sc, driver, csinode]


@pytest.mark.parametrize(
    ("kind", "path", "value", "needles"),
    [
        pytest.param("StorageClass", ("allowedTopologies",), {"zone": "a"}, ("StorageClass fast", "allowedTopologies"), id="allowedTopologies a map"),
        pytest.param("StorageClass", ("allowedTopologies",), [{"matchLabelExpressions": [{"key": "z", "values": "a"}]}], ("allowedTopologies[0].matchLabelExpressions[0].values",), id="topology values a string"),
        pytest.param("CSIDriver", ("spec", "storageCapacity"), "yes", ("CSIDriver csi.example.com", "spec.storageCapacity", "boolean"), id="storageCapacity a string"),
        pytest.param("CSINode", ("spec", "drivers", 0, "allocatable", "count"), -1, ("CSINode n1", "allocatable.count", "greater than or equal to 0"), id="allocatable count -1"),
        pytest.param("PersistentVolumeClaim", ("metadata", "ownerReferences"), [{"kind": "StatefulSet", "name": "s", "uid": 5}], ("PersistentVolumeClaim default/data", "ownerReferences[0].uid"), id="ownerReferences uid an int"),
    ],
)  # fmt: skip
def test_storage_wrong_types(
    tmp_path: Path, kind: str, path: tuple[Any, ...], value: Any, needles: tuple[str, ...]
) -> None:
    docs = _storage()
    f = tmp_path / "base.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    assert run(["diagnose", str(f), "-o", "json"])[0] in (0, 1)  # the base is valid
    target: Any = next(d for d in docs if d["kind"] == kind)
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    one_error(tmp_path, docs, *needles)


def test_iscsi_iqn_of_the_wrong_type(tmp_path: Path) -> None:
    pod = copy.deepcopy(POD)
    pod["spec"]["volumes"] = [{"name": "v", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": 42, "lun": 0}}]
    one_error(tmp_path, [NODE, pod], "Pod default/p", "spec.volumes[0].iscsi.iqn")


def test_container_status_name_of_the_wrong_type(tmp_path: Path) -> None:
    pod = copy.deepcopy(POD)
    pod["spec"]["nodeName"] = "n1"
    pod["status"] = {"phase": "Running", "containerStatuses": [{"name": ["c"], "ready": True}]}
    one_error(
        tmp_path,
        [NODE, pod, POD | {"metadata": {"name": "q", "namespace": "default"}}],
        "containerStatuses[0].name",
    )


@pytest.mark.parametrize("kind", [5, {"a": 1}, ["Pod"], True])
def test_non_string_kind(tmp_path: Path, kind: Any) -> None:
    one_error(tmp_path, [NODE, POD | {"kind": kind}], "kind is a")


def test_yaml_complex_key_holding_a_list(tmp_path: Path) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([NODE]) + "---\nkind: Pod\nmetadata: {name: p}\n? [a, b]\n: 1\n")
    code, _, err = run(["diagnose", str(f)])
    assert code == 3 and "as a mapping key" in err and len(err.splitlines()) == 1, err


def test_nested_lists_are_flattened(tmp_path: Path) -> None:
    inner = {"apiVersion": "v1", "kind": "List", "items": [POD]}
    outer = {"apiVersion": "v1", "kind": "List", "items": [inner, NODE]}
    typed = {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "PodList", "items": [POD | {"metadata": {"name": "q", "namespace": "default"}}]}]}  # fmt: skip
    f = tmp_path / "in.json"
    f.write_text(json.dumps(outer) + "\n" + json.dumps(typed))
    code, out, err = run(["diagnose", str(f), "-o", "json"])
    assert code == 0, err
    doc = json.loads(out)
    assert sorted(p["pod"] for p in doc["pods"]) == ["default/p", "default/q"]


def test_unreadable_subdirectory_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "dump" / "sub").mkdir(parents=True)
    (tmp_path / "dump" / "nodes.yaml").write_text(yaml.safe_dump(NODE))
    (tmp_path / "dump" / "sub" / "pods.yaml").write_text(yaml.safe_dump(POD))
    real_scandir = os.scandir
    blocked = str(tmp_path / "dump" / "sub")

    def scandir(path: Any = ".") -> Any:
        # Root reads any directory regardless of its mode bits: refuse this one as the kernel would.
        if str(path) == blocked:
            raise PermissionError(13, "Permission denied", blocked)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, _, err = run(["diagnose", str(tmp_path / "dump")])
    assert code == 3 and f"{blocked}: cannot read directory: Permission denied" in err, err


def test_truncated_file_is_said(tmp_path: Path) -> None:
    f = tmp_path / "cut.yaml"
    f.write_text(
        yaml.safe_dump_all([NODE, POD])
        + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: q\n  namespace: defa"
    )
    code, out, err = run(["diagnose", str(f), "-o", "json"])
    assert code in (0, 1), err
    assert any("looks truncated" in w for w in json.loads(out)["warnings"]), out
    whole = tmp_path / "whole.yaml"
    whole.write_text(yaml.safe_dump_all([NODE, POD]))
    code, out, _ = run(["diagnose", str(whole), "-o", "json"])
    assert not any("truncated" in w for w in json.loads(out)["warnings"])
