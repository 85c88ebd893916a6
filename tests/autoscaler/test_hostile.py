"""Malformed autoscaler objects never crash a diagnosis or silently change it: a status that cannot be read
is "not checked" with the reason; malformed NodePools/NodeClaims keep what can be read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app, dispatch_args

CHECK = Path(__file__).resolve().parents[2] / "fixtures" / "autoscaler" / "check"


def _run(tmp_path: Path, extra: str) -> dict[str, Any]:
    (tmp_path / "extra.yaml").write_text(extra)
    res = CliRunner().invoke(
        app,
        dispatch_args(
            [
                str(CHECK / "eks-nodes.yaml"),
                str(CHECK / "pending-web.yaml"),
                str(tmp_path / "extra.yaml"),
                "-o",
                "json",
            ]
        ),
    )
    assert res.exit_code == 1, res.stdout + res.stderr
    doc: dict[str, Any] = json.loads(res.stdout)
    return doc


@pytest.mark.parametrize(
    ("status", "why"),
    [
        pytest.param(
            "'just text'", "neither a YAML status document nor the Cluster-wide:/NodeGroups: text", id="prose"
        ),
        pytest.param(
            "'nodeGroups: [{name: g, health: {maxSize: lots}}]'",
            "expected an integer, got 'lots'",
            id="bad count",
        ),
        pytest.param("'a: [unclosed'", "invalid YAML", id="broken YAML"),
    ],
)
def test_unreadable_status_is_not_checked_with_the_reason(tmp_path: Path, status: str, why: str) -> None:
    cm = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cluster-autoscaler-status, namespace: kube-system}}\ndata:\n  status: {status}\n"
    (p,) = _run(tmp_path, cm)["pods"]
    first = p["remedies"][0]
    assert first["details"]["autoscaler"]["can_add"] is False
    assert (
        "not checked: cluster-autoscaler status unreadable: configmap kube-system/cluster-autoscaler-status"
        in first["risk"]
    )
    assert why in first["risk"]


def test_malformed_karpenter_objects_are_read_as_far_as_they_go(tmp_path: Path) -> None:
    extra = (
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: weird}\n"
        "spec: {weight: heavy, limits: {cpu: lots}, template: {spec: {requirements: [7, {key: a}], taints: [x]}}}\n"
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: nc}\nstatus: {conditions: [1, {type: Launched}]}\n"
    )
    doc = _run(tmp_path, extra)
    (p,) = doc["pods"]
    karp = [r for r in p["remedies"] if r["target"] == "NodePool weird"]
    # Nothing limits or rejects the pod in what could be read: Karpenter should launch a node for it.
    assert len(karp) == 1 and karp[0]["summary"].startswith(
        "Karpenter should launch a node for NodePool weird"
    )
