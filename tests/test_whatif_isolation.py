"""What-ifs never change the snapshot they came from, and a pod's report never depends on the other pods.

Remedies prove a change by replaying a derived copy (`Snapshot.derive`), which shares the parent's unchanged
NodeInfos and object lists: anything a copy then changes (bind, remove_pods, add_object, replace_object) is
copied first. The pipeline also shares one owner's remedies between replicas with the same scheduling
signature: those are checked here against each pod diagnosed alone.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.load.files import RawObject, load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.report import json as json_report
from kdiagnose.schedconfig import load_scheduler_config
from kdiagnose.versions import dialect_for
from tests.golden_harness import FIXTURES, all_cases, case_id, config_for, scenario_for
from tests.varied import varied_snapshot

Case = tuple[Snapshot, Any]


def _fingerprint(snap: Snapshot) -> Any:
    """Everything of a snapshot a replay reads, by value and by object identity."""
    nodes = [
        (
            id(ni),
            ni.name,
            [id(p) for p in ni.pods],
            sorted(ni.requested.items()),
            ni.non_zero_cpu,
            ni.non_zero_mem,
            list(ni.used_ports),
            [id(p) for p in ni.pods_with_affinity],
            [id(p) for p in ni.pods_with_required_anti_affinity],
            sorted(ni.pvc_ref_counts.items()),
            sorted(ni.allocatable.items()),
            sorted(ni.node.labels.items()),
            [(t.key, t.value, t.effect) for t in ni.node.taints],
            ni.node.unschedulable,
        )
        for ni in snap.node_infos
    ]
    pods = [(id(p), p.key, p.node_name, p.nominated_node_name) for p in snap.pods]
    objects = {k: [id(o) for o in v] for k, v in snap.objects.items()}
    contents = json.dumps(snap.objects, sort_keys=True, default=str)
    return nodes, pods, [id(p) for p in snap.pending], objects, contents, sorted(snap.present)


def _aggregates(snap: Snapshot) -> dict[str, Any]:
    return {
        ni.name: (
            sorted(p.key for p in ni.pods),
            sorted((k, v) for k, v in ni.requested.items() if v),
            (ni.non_zero_cpu, ni.non_zero_mem),
            sorted(ni.used_ports),
            sorted(p.key for p in ni.pods_with_affinity),
            sorted(p.key for p in ni.pods_with_required_anti_affinity),
            sorted(ni.pvc_ref_counts.items()),
        )
        for ni in snap.node_infos
    }


def _rebuilt(snap: Snapshot) -> Snapshot:
    """The same nodes and pods as `snap`, built from scratch (no sharing, no derive)."""
    return Snapshot(snap.dialect, [ni.node for ni in snap.node_infos], snap.pods)


def _golden(name: str) -> Snapshot:
    loaded = load_paths([str(FIXTURES / "golden" / f"{name}.yaml")])
    return build_snapshot(loaded.objects, dialect_for("v1.34.1"), list_kinds=loaded.list_kinds)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: _golden("cluster-eks-large-mixed"), id="eks-large-mixed"),
        pytest.param(lambda: _golden("cluster-gke-large-mixed"), id="gke-large-mixed"),
        pytest.param(lambda: varied_snapshot(30, 5, 20, 3), id="varied-3"),
    ],
)
def test_changes_to_a_what_if_copy_leave_its_parent_alone(make: Any) -> None:
    base = make()
    base.add_object("ConfigMap", {"metadata": {"name": "cm", "namespace": "default"}, "data": {"k": "v"}})
    before = _fingerprint(base)
    child = base.derive()
    target = next(ni for ni in base.node_infos if ni.pods)
    victim = next(p for p in base.pods if p.node_name and p.node_name != target.name)
    pending = child.pending[0]
    bound = child.bind(pending, target.name)
    child.remove_pods([victim])
    child.add_object("ConfigMap", {"metadata": {"name": "what-if", "namespace": "default"}})
    old = base.objects["ConfigMap"][0]
    child.replace_object("ConfigMap", old, {**old, "data": {"k": "changed"}})

    assert _fingerprint(base) == before
    # The parent's pod is still pending; the copy has a bound copy of it.
    assert pending in base.pending and not pending.node_name
    assert bound is not pending and bound.node_name == target.name and bound not in child.pending
    # Copy-on-write: only the two NodeInfos the copy changed are its own.
    own = {ni.name for ni in child.node_infos if ni is not base.node_info_by_name[ni.name]}
    assert own == {target.name, victim.node_name}
    # What the copy holds is what a snapshot built from scratch with its pods holds.
    assert _aggregates(child) == _aggregates(_rebuilt(child))
    assert bound.key in _aggregates(child)[target.name][0]
    assert victim.key not in _aggregates(child)[str(victim.node_name)][0]
    # A copy of the copy leaves the copy alone too.
    mid = _fingerprint(child)
    grandchild = child.derive()
    grandchild.bind(grandchild.pending[0], target.name)
    grandchild.remove_pods([p for p in child.pods if p.node_name == target.name][:1])
    assert _fingerprint(child) == mid


def _load(golden_json: Path) -> Case:
    golden = json.loads(golden_json.read_text())
    loaded = load_paths([str(scenario_for(golden_json))])
    dialect = dialect_for(golden.get("k8s_version"))
    snap = build_snapshot(loaded.objects, dialect, list_kinds=loaded.list_kinds)
    config = config_for(golden_json)
    profiles = (
        list(load_scheduler_config(str(config), dialect, strict=True).profiles) if config.exists() else None
    )
    return snap, profiles


def _replayed_cases() -> list[Path]:
    return [c for c in all_cases() if not json.loads(c.read_text()).get("error")]


def _pods(snap: Snapshot, profiles: Any, only: list[str] | None = None) -> dict[str, Any]:
    report = diagnose_snapshot(snap, profiles, pods=only or (), remedy_limit=None)
    return {p["pod"]: p for p in json.loads(json_report.render(report))["pods"]}


def _alone_equals_in_run(make: Any) -> int:
    """Computing every pending pod's report and remedies leaves the snapshot untouched, and each pod's entry
    equals its entry when it is diagnosed alone (on a fresh load)."""
    snap, profiles = make()
    before = _fingerprint(snap)
    in_run = _pods(snap, profiles)
    assert _fingerprint(snap) == before
    for key, entry in in_run.items():
        fresh, fresh_profiles = make()
        assert _pods(fresh, fresh_profiles, [key])[key] == entry, key
    return len(in_run)


def test_golden_cases_reports_are_per_pod_and_leave_the_snapshot_untouched() -> None:
    """The v1.34.1 scenarios and configured profiles (the other releases' directories replay the same
    scenario files)."""
    total = 0
    for c in _replayed_cases():
        if c.relative_to(FIXTURES).parts[0] in ("golden", "golden-config"):
            try:
                total += _alone_equals_in_run(lambda c=c: _load(c))
            except AssertionError as e:
                raise AssertionError(f"{case_id(c)}: {e}") from e
    assert total > 150


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_varied_clusters_reports_are_per_pod_and_leave_the_snapshot_untouched(seed: int) -> None:
    assert _alone_equals_in_run(lambda: (varied_snapshot(30, 5, 12, seed), None)) >= 12


def _node(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": spec,
        "status": {
            "allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"{name}-uid",
            "creationTimestamp": "2025-01-02T00:00:00Z",
        },
        "spec": {
            **spec,
            "containers": [{"name": "app", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}],
        },
        "status": {"phase": "Running" if spec.get("nodeName") else "Pending"},
    }


def _replica(name: str) -> dict[str, Any]:
    pod = _pod(name, "500m", priority=1000)
    pod["metadata"]["labels"] = {"app": "web"}
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-uid", "controller": True}
    pod["metadata"]["ownerReferences"] = [ref]
    return pod


# Two replicas of one bare ReplicaSet: same scheduling signature, so the pipeline may share their remedies.
# Cordoned, tainted and full nodes give the remedies that name the pod itself (preemption's nominee and
# verify command, uncordon's verify command, the ReplicaSet's `kubectl delete pod/NAME`).
_REPLICAS = [
    _node(
        "cordoned",
        "2",
        unschedulable=True,
        taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
    ),
    _node("dedicated", "2", taints=[{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]),
    _node("busy", "1"),
    _pod("filler", "800m", nodeName="busy", priority=0),
    {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "rs-uid"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {}},
    },
]


@pytest.mark.parametrize(
    "names",
    [
        pytest.param(("web-aaaaa", "web-bbbbb"), id="two replicas"),
        # web-10's and web-100's texts are renamed from web-1's (not inside their own names).
        pytest.param(("web-1", "web-10", "web-100"), id="names that contain each other"),
        # web-1 inside aweb-1, which comes first: web-1's are searched again, not renamed.
        pytest.param(("aweb-1", "web-1"), id="a name inside an earlier one"),
    ],
)
def test_replicas_sharing_a_signature_get_remedies_naming_themselves(names: tuple[str, ...]) -> None:
    def make() -> Case:
        objects = [RawObject(o, "replicas.yaml") for o in copy.deepcopy([*_REPLICAS, *map(_replica, names)])]
        return build_snapshot(objects, dialect_for("v1.34.1")), None

    snap, _ = make()
    in_run = _pods(snap, None)
    for name in names:
        entry = in_run[f"default/{name}"]
        assert [r["kind"] for r in entry["remedies"]][:1] == ["preemption"]
        assert {"uncordon", "toleration"} <= {r["kind"] for r in entry["remedies"]}
        text = json.dumps(entry["remedies"])
        assert f"kubectl delete pod/{name} -n default" in text
        assert f"nominate it for default/{name}:" in text
        assert f"kubectl get pod/{name} -n default -o wide  # NODE: cordoned" in text
        others = [o for o in names if o != name]
        assert not any(re.search(rf"[/ ]{re.escape(o)}[ :]", text) for o in others), name
    assert _alone_equals_in_run(make) == len(names)
