"""The differential fuzzer's generator (conformance/fuzz/gen.py): deterministic per seed, and its scenarios
are valid input that kdiagnose loads and replays without error (no Go harness needed here)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conformance.fuzz.gen import generate
from conformance.fuzz.run import classify, shrink
from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for


def test_same_seed_same_scenario_and_seeds_differ() -> None:
    assert generate(7, "v1.35.4") == generate(7, "v1.35.4")
    assert generate(7, "v1.35.4") != generate(8, "v1.35.4")


@pytest.mark.parametrize("k8s", ["v1.34.1", "v1.35.4"])
def test_scenarios_load_and_replay(tmp_path: Path, k8s: str) -> None:
    kinds: set[str] = set()
    for seed in range(1, 31):
        docs = generate(seed, k8s)
        kinds |= {d["kind"] for d in docs}
        f = tmp_path / f"s{seed}.yaml"
        f.write_text(yaml.safe_dump_all(docs, explicit_start=True))
        res = load_paths([str(f)])
        snap = build_snapshot(res.objects, dialect_for(k8s), list_kinds=res.list_kinds)
        assert snap.pending, seed
        sched = Scheduler(snap, None)
        for pod in snap.pending:
            d = sched.diagnose(pod)
            assert d.message or d.scheduled, (seed, pod.key)
    # Thirty seeds cover every object class the fuzzer is meant to exercise.
    for kind in (
        "Node",
        "Pod",
        "PodDisruptionBudget",
        "PriorityClass",
        "PersistentVolumeClaim",
        "StorageClass",
        "CSINode",
        "DeviceClass",
        "ResourceSlice",
        "ResourceClaimTemplate",
    ):
        assert kind in kinds, kind


def test_realistic_node_names() -> None:
    names = {d["metadata"]["name"] for s in range(1, 40) for d in generate(s) if d["kind"] == "Node"}
    assert any(n.endswith(".ec2.internal") for n in names)
    assert any(n.startswith("gke-") and "-pool-" in n for n in names)
    assert any(n.startswith("aks-") and "-vmss" in n for n in names)
    assert "node-9" in names and "node-10" in names


def test_classify_names_the_field_and_plugin() -> None:
    line = "a/p: filters[n1]:\n    want {'plugin': 'NodeAffinity', 'code': 'x'}\n    got  'feasible'"
    assert classify(line) == "filters-NodeAffinity-vs-feasible"
    assert classify("a/p: message:\n    want 'x'\n    got  'y'") == "message"


def test_shrink_keeps_the_property() -> None:
    docs = [{"kind": "K", "metadata": {"name": str(i)}, "spec": {"a": i, "b": [1, 2]}} for i in range(20)]
    small = shrink(
        docs, lambda ds: any(d["metadata"]["name"] == "13" and "a" in d.get("spec", {}) for d in ds), 10
    )
    assert small == [{"kind": "K", "metadata": {"name": "13"}, "spec": {"a": 13}}]
