"""Live mode reads the autoscalers' state read-only, through the real `kubernetes` client against
tests/fake_apiserver.py: the status ConfigMap (GET), Karpenter NodePools/NodeClaims (LIST), their events."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app, dispatch_args
from kdiagnose.load.files import load_paths
from tests.fake_apiserver import FakeAPIServer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "autoscaler"
Obj = dict[str, Any]


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


def _objects(name: str) -> list[Obj]:
    return [copy.deepcopy(r.obj) for r in load_paths([str(FIXTURES / name)]).objects]


def _live(srv: FakeAPIServer, tmp_path: Path, *args: str) -> Obj:
    kc = srv.kubeconfig(tmp_path / "kubeconfig")
    res = CliRunner().invoke(app, dispatch_args([*args, "--kubeconfig", str(kc), "-o", "json"]))
    assert res.exit_code == 1, res.stdout + res.stderr
    doc: Obj = json.loads(res.stdout)
    return doc


def test_live_reads_the_status_configmap_and_gives_raise_the_max(tmp_path: Path) -> None:
    with FakeAPIServer(_objects("ca-at-max.yaml")) as srv:
        srv.not_served_groups.add("karpenter.sh")  # no Karpenter installed: not a warning
        doc = _live(srv, tmp_path, "pod", "web-7d4b9c8f6-x2x9q", "-n", "shop")
        paths = srv.paths()
        methods = srv.methods()
    assert methods == {"GET"}
    assert "/api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-status" in paths
    assert doc["warnings"] == []
    (p,) = doc["pods"]
    assert (
        p["remedies"][0]["summary"]
        == "raise the max of group apps from 3 to 4 (then the autoscaler adds 1 node(s))"
    )
    rec = p["recorded"]
    assert [e["reason"] for e in rec["events"]] == ["NotTriggerScaleUp", "FailedScheduling"]
    assert all(e["ageSeconds"] is not None for e in rec["events"])
    assert rec["autoscaler"][0]["reason"] == "NotTriggerScaleUp" and rec["autoscaler"][0]["agrees"] is True


def test_denied_status_read_is_not_checked_forbidden(tmp_path: Path) -> None:
    with FakeAPIServer(_objects("ca-at-max.yaml")) as srv:
        srv.not_served_groups.add("karpenter.sh")
        srv.forbidden.add("configmaps")
        doc = _live(srv, tmp_path, "pod", "web-7d4b9c8f6-x2x9q", "-n", "shop")
    assert (
        'not checked: cluster-autoscaler status (forbidden: user "system:serviceaccount:test:kdiagnose" needs RBAC get on configmaps in namespace "kube-system"): scale-up advice is given blind'
        in doc["warnings"]
    )
    (p,) = doc["pods"]
    first = p["remedies"][0]
    assert first["summary"] == "scale node pool apps by 1"
    assert (
        '(not checked: cluster-autoscaler status (forbidden: user "system:serviceaccount:test:kdiagnose" needs RBAC get on configmaps in namespace "kube-system"))'
        in first["risk"]
    )
    assert first["details"]["autoscaler"]["can_add"] is False


def test_live_pods_reads_karpenter_nodepools_nodeclaims_and_their_events(tmp_path: Path) -> None:
    with FakeAPIServer(_objects("karpenter-limit.yaml")) as srv:
        doc = _live(srv, tmp_path, "pods", "-n", "data")
        paths = srv.paths()
    assert "/apis/karpenter.sh/v1/nodepools" in {p.split("?")[0] for p in paths}
    assert any("reason%3DNominated" in p or "reason=Nominated" in p for p in paths)
    by = {p["pod"]: p for p in doc["pods"]}
    assert by["data/report-gen-28912345-x7m4p"]["remedies"][0]["summary"] == (
        "raise spec.limits.cpu of NodePool default from 40 to 52"
    )
    assert by["data/api-7f8e9d0c1b-q5w6e"]["remedies"][0]["summary"].startswith(
        "Karpenter is already launching a node for this pod: nodeclaim default-8xk2q"
    )


def test_denied_nodepools_are_not_checked(tmp_path: Path) -> None:
    with FakeAPIServer(_objects("karpenter-limit.yaml")) as srv:
        srv.forbidden.add("karpenter.sh/nodepools")
        doc = _live(srv, tmp_path, "pods", "-n", "data")
    assert (
        'not checked: NodePool (forbidden: user "system:serviceaccount:test:kdiagnose" needs RBAC list on nodepools.karpenter.sh at the cluster scope): scale-up advice is given blind'
        in doc["warnings"]
    )
    first = {p["pod"]: p for p in doc["pods"]}["data/report-gen-28912345-x7m4p"]["remedies"][0]
    assert (
        'not checked: Karpenter NodePools (forbidden: user "system:serviceaccount:test:kdiagnose" needs RBAC list on nodepools.karpenter.sh at the cluster scope)'
        in first["risk"]
    )


def test_check_context_gate_uses_the_live_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    objs = [o for o in _objects("check/eks-nodes.yaml")] + _objects("check/ca-status-room.yaml")
    with FakeAPIServer(objs) as srv:
        srv.not_served_groups.add("karpenter.sh")
        kc = srv.kubeconfig(tmp_path / "kubeconfig")
        monkeypatch.chdir(FIXTURES / "check")
        res = CliRunner().invoke(
            app,
            [
                "check",
                "--no-config",
                "-f",
                "web.manifests.yaml",
                "--context",
                "fake",
                "--kubeconfig",
                str(kc),
            ],
        )
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "fits after scale-up of group apps: 3 of 5 → 4" in " ".join(res.stdout.split())


def test_live_reads_the_failures_ca_recorded_on_its_status_configmap(tmp_path: Path) -> None:
    objs = (
        _objects("check/eks-nodes.yaml")
        + _objects("check/ca-status-backoff.yaml")
        + _objects("check/pending-web.yaml")
    )
    with FakeAPIServer(objs) as srv:
        srv.not_served_groups.add("karpenter.sh")
        doc = _live(srv, tmp_path, "pod", "web-7d4b9c8f6-x2x9q", "-n", "shop")
        methods = srv.methods()
    assert methods == {"GET"}
    (p,) = doc["pods"]
    assert p["remedies"][0]["summary"].startswith(
        "fix node group apps first: in backoff after a failed scale-up"
    )
    assert (
        "cluster-autoscaler recorded ScaleUpFailed: Failed adding 1 nodes to group"
        in p["remedies"][0]["summary"]
    )


def test_what_the_live_read_could_not_read_is_a_snapshot_field_not_a_fake_object_kind() -> None:
    """The snapshot is built once with what could not be read; nothing writes into its objects afterwards,
    and the autoscaler view (and what-if copies) read the field."""
    from kdiagnose.autoscaler.view import view_for
    from kdiagnose.load.files import RawObject
    from kdiagnose.load.snapshot import build_snapshot
    from kdiagnose.versions import dialect_for

    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n"},
        "status": {"allocatable": {"cpu": "1"}},
    }
    snap = build_snapshot(
        [RawObject(node, "context x")],
        dialect_for("v1.37.2"),
        unreadable={"cluster-autoscaler status": "forbidden", "NodePool": "forbidden"},
    )
    kinds = set(snap.objects)
    view = view_for(snap)
    assert view.ca_note == "not checked: cluster-autoscaler status (forbidden)"
    assert view.karpenter_note == "not checked: Karpenter NodePools (forbidden)"
    assert set(snap.objects) == kinds and not any(k.startswith("kdiagnose.io/") for k in kinds)
    assert view_for(snap.derive()).ca_note == view.ca_note
