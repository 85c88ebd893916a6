"""`check --context` reads the cluster's LimitRanges and RuntimeClasses (list only, as the read-only RBAC
allows): the checked manifests' pods get their defaults, overhead and node scheduling as the API server's
admission would add them, and no "not checked" note is left (tests/fake_apiserver.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fake_apiserver import FakeAPIServer
from tests.test_live import SEED, _objects, run

Obj = dict[str, Any]

_MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: bare, namespace: team}
spec:
  replicas: 1
  selector: {matchLabels: {app: bare}}
  template:
    metadata: {labels: {app: bare}}
    spec:
      containers: [{name: app, image: app:1}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: sandboxed, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: sandboxed}}
  template:
    metadata: {labels: {app: sandboxed}}
    spec:
      runtimeClassName: kata
      containers: [{name: app, image: app:1, resources: {requests: {cpu: 100m}}}]
"""

_CLUSTER: list[Obj] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {}}},
    {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "defaults", "namespace": "team"},
        # A default request no node has room for (4 CPU allocatable each): only read, it fails the check.
        "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "8"}, "default": {"cpu": "8"}}]},
    },
    {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "kata"},
        "handler": "kata",
        "scheduling": {"nodeSelector": {"runtime": "kata"}},  # no node has the label
    },
]


def _check(tmp_path: Path, cluster: list[Obj]) -> tuple[Obj, FakeAPIServer]:
    manifests = tmp_path / "m.yaml"
    manifests.write_text(_MANIFESTS)
    with FakeAPIServer([*_objects(SEED), *cluster], git_version="v1.35.0") as srv:
        res = run(
            "check", "-f", str(manifests), "--context", "fake", "--no-remedies", "-o", "json",
            "--kubeconfig", str(srv.kubeconfig(tmp_path / "kc")),
        )  # fmt: skip
        assert res.exit_code in (0, 1), res.stderr + res.stdout
    return json.loads(res.stdout), srv


def _by_name(doc: Obj) -> dict[str, Obj]:
    return {w["name"]: w for w in doc["workloads"]}


def test_live_check_applies_the_clusters_limitranges_and_runtimeclasses(tmp_path: Path) -> None:
    doc, srv = _check(tmp_path, _CLUSTER)
    assert srv.methods() == {"GET"}
    paths = [p.split("?")[0] for p in srv.paths()]
    assert "/api/v1/limitranges" in paths and "/apis/node.k8s.io/v1/runtimeclasses" in paths
    text = json.dumps(doc)
    assert (
        "LimitRange defaults not checked" not in text
        and "not checked: the snapshot has no RuntimeClasses" not in text
    )
    w = _by_name(doc)
    assert w["bare"]["outcome"] == "unschedulable"
    assert "Insufficient cpu" in w["bare"]["summary"]
    assert w["sandboxed"]["outcome"] == "unschedulable"
    assert "didn't match Pod's node affinity/selector" in w["sandboxed"]["summary"]


def test_live_check_with_none_in_the_cluster_has_nothing_unchecked(tmp_path: Path) -> None:
    """Listed and empty is an answer (nothing to apply), not "not checked"; a runtimeClassName the cluster
    does not have is the admission error the API server would give."""
    doc, _ = _check(tmp_path, [_CLUSTER[0]])
    text = json.dumps(doc)
    assert "LimitRange defaults not checked" not in text
    w = _by_name(doc)
    assert w["bare"]["outcome"] == "fits"
    assert "not checked: the snapshot has no RuntimeClasses" not in text
