"""The differential fuzzer's generator (conformance/fuzz/gen.py): deterministic per seed, and its scenarios
are valid input that kdiagnose loads and replays without error (no Go harness needed here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def _small_seeds(k8s: str, n: int) -> list[int]:
    """The first n seeds whose cluster is small (the replay test stays fast)."""
    out = []
    seed = 1
    while len(out) < n:
        if sum(d["kind"] == "Node" for d in generate(seed, k8s)) <= 12:
            out.append(seed)
        seed += 1
    return out


@pytest.mark.parametrize("k8s", ["v1.34.12", "v1.37.2"])
def test_scenarios_load_and_replay(tmp_path: Path, k8s: str) -> None:
    kinds: set[str] = set()
    for seed in _small_seeds(k8s, 30):
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
            assert d.message or d.scheduled or d.gated, (seed, pod.key)
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


def _pods(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == "Pod"]


def test_large_clusters_have_pools_and_zones() -> None:
    """One seed in four draws a cluster of 50-300 nodes in several pools and zones."""
    sizes = []
    for seed in range(1, 41):
        docs = generate(seed, "v1.37.2")
        nodes = [d for d in docs if d["kind"] == "Node"]
        sizes.append(len(nodes))
        if len(nodes) >= 50:
            assert len(nodes) <= 300
            labels = [n["metadata"]["labels"] for n in nodes]
            pool_key = next(
                k
                for k in (
                    "eks.amazonaws.com/nodegroup",
                    "cloud.google.com/gke-nodepool",
                    "kubernetes.azure.com/agentpool",
                    "pool",
                )
                if k in labels[0]
            )
            assert len({lab[pool_key] for lab in labels}) >= 3
            assert len({lab["topology.kubernetes.io/zone"] for lab in labels}) >= 1
    assert sum(s >= 50 for s in sizes) >= 5
    assert sum(s <= 12 for s in sizes) >= 20


def test_features_the_fuzzer_must_reach() -> None:
    """Across 60 seeds: preemption material (PDBs with expressions, a nominated pod, terminating pods),
    volumes of every binding kind, DRA requests of every form, spread and affinity variants."""
    blob = "\n".join(json.dumps(generate(seed, "v1.37.2")) for seed in range(1, 61))
    for needle in (
        '"nominatedNodeName"',
        '"deletionTimestamp"',
        '"matchExpressions"',
        '"kubernetes.io/no-provisioner"',
        '"allowedTopologies"',
        '"CSIStorageCapacity"',
        '"ReadWriteOncePod"',
        '"allocationMode": "All"',
        '"firstAvailable"',
        '"reservedFor"',
        '"minDomains"',
        '"nodeTaintsPolicy"',
        '"namespaceSelector"',
        '"operator": "Gt"',
        '"matchFields"',
        '"hostPort"',
        '"tolerationSeconds"',
        '"value": -10',
    ):
        assert needle in blob, needle


def _first_gen(k8s: str, seeds: range) -> list[list[dict[str, Any]]]:
    return [generate(seed, k8s) for seed in seeds]


def test_newer_features_the_fuzzer_must_reach() -> None:
    """Across 150 seeds of v1.37.2: the fields of issue #14's second round (label keys, empty selectors, the
    DRA gates of v1.36/v1.37, declared features, CSI driver checks, admission objects)."""
    blob = "\n".join(json.dumps(d) for d in _first_gen("v1.37.2", range(1, 151)))
    for needle in (
        '"matchLabelKeys"',
        '"mismatchLabelKeys"',
        '"labelSelector": {}',
        '"selector": {}',
        '"sharedCounters"',
        '"consumesCounters"',
        '"allowMultipleAllocations": true',
        '"requestPolicy"',
        '"bindingConditions"',
        '"extendedResourceName"',
        '"kind": "DeviceTaintRule"',
        '"declaredFeatures"',
        '"restartPolicyRules"',
        '"preventPodSchedulingIfMissing": true',
        '"maximumVolumeSize"',
        '"pullPolicy": "IfNotPresent"',
        '"schedulingGates"',
        '"runtimeClassName"',
        '"overhead"',
        '"kind": "LimitRange"',
        '"adminAccess": true',
    ):
        assert needle in blob, needle


def test_newer_features_are_gated_by_release() -> None:
    """Objects a release's API server does not serve, and fields it does not have, are not generated."""
    for docs in _first_gen("v1.36.5", range(1, 121)):
        blob = json.dumps(docs)
        assert '"DeviceTaintRule"' not in blob  # resource.k8s.io/v1 serves it from v1.37
    for docs in _first_gen("v1.35.8", range(1, 121)):
        assert '"preventPodSchedulingIfMissing"' not in json.dumps(docs)  # a v1.36 field
    for docs in _first_gen("v1.34.12", range(1, 121)):
        assert '"declaredFeatures"' not in json.dumps(docs)  # a v1.35 field


def test_new_features_keep_the_old_scenario() -> None:
    """The new fields draw from a second generator: every Node keeps the name, labels and taints it had."""
    docs = generate(11, "v1.37.2")
    nodes = sorted(
        (d["metadata"]["name"], d["metadata"]["labels"]["topology.kubernetes.io/zone"])
        for d in docs
        if d["kind"] == "Node"
    )
    assert nodes == sorted(
        (d["metadata"]["name"], d["metadata"]["labels"]["topology.kubernetes.io/zone"])
        for d in generate(11, "v1.36.5")
        if d["kind"] == "Node"
    )


def test_affinity_label_keys_are_merged_as_stored() -> None:
    """The API server merges matchLabelKeys (In) and mismatchLabelKeys (NotIn) into an affinity term's
    labelSelector at creation; the harness does not, so the generator writes terms as stored."""
    seen = 0
    for docs in _first_gen("v1.37.2", range(1, 151)):
        for pod in _pods(docs):
            labels = pod["metadata"].get("labels", {})
            for kind in ("podAffinity", "podAntiAffinity"):
                block = pod["spec"].get("affinity", {}).get(kind, {})
                terms = list(block.get("requiredDuringSchedulingIgnoredDuringExecution", []))
                terms += [
                    w["podAffinityTerm"]
                    for w in block.get("preferredDuringSchedulingIgnoredDuringExecution", [])
                ]
                for term in terms:
                    for field, op in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
                        for key in term.get(field, []):
                            if key in labels:
                                seen += 1
                                assert {"key": key, "operator": op, "values": [labels[key]]} in term[
                                    "labelSelector"
                                ].get("matchExpressions", [])
    assert seen >= 5


def test_stored_pods_carry_what_admission_added() -> None:
    """A pod with spec.priority is one as stored: DefaultTolerationSeconds' tolerations are on it (the
    harness re-admits it except for Priority; kdiagnose takes it as admitted)."""
    for seed in range(1, 21):
        for pod in _pods(generate(seed, "v1.37.2")):
            if "priority" in pod["spec"]:
                keys = {t.get("key") for t in pod["spec"].get("tolerations", [])}
                assert {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} <= keys or any(
                    t == {"operator": "Exists"} for t in pod["spec"].get("tolerations", [])
                ), pod["metadata"]["name"]


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


def _large_seeds(n: int) -> list[int]:
    """The first n seeds with a cluster of 50-120 nodes (large, yet a quick report)."""
    out = []
    seed = 1
    while len(out) < n:
        if 50 <= sum(d["kind"] == "Node" for d in generate(seed, "v1.37.2")) <= 120:
            out.append(seed)
        seed += 1
    return out


@pytest.mark.parametrize("seed", _large_seeds(2))
def test_large_generated_cluster_report_is_order_invariant(seed: int) -> None:
    """kdiagnose's whole -o json report (verdicts, scores, preemption victims, remedies) for a generated
    cluster of 50+ nodes does not change when the documents are reshuffled (what fuzz-parity's
    --order-check does for every large scenario)."""
    from conformance.fuzz.run import order_lines

    docs = generate(seed, "v1.37.2")
    assert sum(d["kind"] == "Node" for d in docs) >= 50
    assert order_lines(docs, "v1.37.2", seed) == []
    assert order_lines(docs, "v1.37.2", seed + 1000) == []


def test_order_lines_reports_a_difference() -> None:
    from conformance.fuzz.run import _json_diff

    assert _json_diff({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == ["/a[1]/b:\n    first  2\n    second 3"]
    assert _json_diff({"a": 1}, {"a": 1}) == []


def test_scalar_fit_reasons_compare_unordered() -> None:
    """fitsRequest ranges over a Go map for scalar resources: two harness runs of
    fixtures/fuzz-found/v135-fit-scalar-reason-order listed them in different orders (both observed), and
    conformance/compare.py takes them as equal; the fixed resources' order still counts."""
    from conformance.compare import compare_case

    path = Path(__file__).parent.parent / "fixtures" / "fuzz-found" / "v135-fit-scalar-reason-order.json"
    recorded = json.loads(path.read_text())
    other = json.loads(path.read_text())
    (status,) = other["pods"][0]["filters"].values()
    status["reasons"] = [
        "Insufficient deviceclass.resource.kubernetes.io/nic.example.com",
        "Insufficient nvidia.com/gpu",
        "Insufficient example.com/fpga",
    ]
    assert sorted(status["reasons"]) == sorted(next(iter(recorded["pods"][0]["filters"].values()))["reasons"])
    assert compare_case("fuzz-found/x", recorded, other) == []
    status["reasons"] = ["Insufficient cpu", "Too many pods", *status["reasons"]]
    (rec_status,) = recorded["pods"][0]["filters"].values()
    rec_status["reasons"] = ["Too many pods", "Insufficient cpu", *rec_status["reasons"]]
    assert compare_case("fuzz-found/x", recorded, other) != []
