"""Enable a node feature (remedies/node_declared_features.py): pools whose kubelets do not declare what the
pod's spec requires, replayed as if they did; always risky, never a change to the workload."""

from __future__ import annotations

from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.remedies.engine import compute_remedies
from kdiagnose.results import RISKY, SAFE
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for
from tests.remedies.helpers import FIXTURES, by_kind, remedies_for

CASE = "remedies/node-declared-features.yaml"
RESTART_ALL = "RestartAllContainersOnContainerExits"


def test_each_rejected_pool_gets_a_replayed_node_side_remedy() -> None:
    remedies, _ = remedies_for(CASE, "default/trainer")
    found = by_kind(remedies, "node-feature")
    assert [r.details["pool"] for r in found] == ["workers-v135", "workers-v136"]
    for r in found:
        assert r.safety == RISKY
        assert r.details["features"] == [RESTART_ALL]
        assert not r.patch and not r.commands  # nothing in the workload changes
        assert "not to the workload" in r.risk
        assert r.verify.startswith(
            f"kubectl get node {r.unblocks[0]} -o jsonpath='{{.status.declaredFeatures}}'"
        )
    v135, v136 = found
    assert v135.unblocks == ["ip-10-0-1-11", "ip-10-0-1-12"]
    assert v136.unblocks == ["ip-10-0-2-21", "ip-10-0-2-22"]


def test_advice_follows_the_pools_kubelet_version() -> None:
    remedies, _ = remedies_for(CASE, "default/trainer")
    v135, v136 = by_kind(remedies, "node-feature")
    # v1.35 kubelets: both gates are alpha there; v1.36 turns them on by default.
    assert v135.details["kubelet_minor"] == 35
    assert f"turn on the kubelet feature gates {RESTART_ALL}, NodeDeclaredFeatures" in v135.apply_note
    assert "or upgrade the kubelets to v1.36 or later, where it is on by default" in v135.apply_note
    assert "alpha at v1.35" in v135.risk
    # v1.36 kubelets declare it by default: an empty declaredFeatures means someone turned it off.
    assert "turned off, on by default at v1.36" in v136.apply_note
    assert "turned off on purpose" in v136.risk


def test_nodes_that_already_declare_it_are_named_with_their_blocker() -> None:
    _, notes = remedies_for(CASE, "default/trainer")
    (line,) = [n for n in notes if n.startswith("node features:")]
    assert f"{RESTART_ALL} is declared by 1 node(s) (pool restart-ready: ip-10-0-3-31)" in line
    assert "NodeResourcesFit: Insufficient cpu" in line


def test_dropping_the_pod_field_is_ruled_out() -> None:
    _, notes = remedies_for(CASE, "default/trainer")
    (line,) = [n for n in notes if n.startswith("node-feature: never a remedy")]
    assert "restartPolicyRules action RestartAllContainers" in line
    _, notes = remedies_for(CASE, "default/netns-agent")
    (line,) = [n for n in notes if n.startswith("node-feature: never a remedy")]
    assert "hostUsers: false" in line and "root on the host" in line


def test_runtime_support_and_alpha_gate_are_stated() -> None:
    remedies, notes = remedies_for(CASE, "default/netns-agent")
    found = by_kind(remedies, "node-feature")
    assert {r.details["pool"] for r in found} == {
        "restart-ready",
        "small-v135",
        "workers-v135",
        "workers-v136",
    }
    for r in found:
        assert "UserNamespacesHostNetworkSupport is alpha" in r.risk or "are alpha" in r.risk
        assert "runtime supports" in r.risk
        assert "container runtime supports user namespaces with host networking" in r.apply_note
    assert (
        "node features: no node declares UserNamespacesHostNetworkSupport in status.declaredFeatures" in notes
    )


def test_a_pod_blocked_by_resources_first_gets_no_node_feature_remedy() -> None:
    # NodeResourcesFit rejects every node before NodeDeclaredFeatures runs (the plugin is last).
    remedies, notes = remedies_for(CASE, "default/big-trainer")
    assert by_kind(remedies, "node-feature") == []
    assert not any(n.startswith("node features:") for n in notes)


def test_before_v136_the_plugin_is_not_in_the_profile() -> None:
    loaded = load_paths([str(FIXTURES / CASE)])
    snap = build_snapshot(loaded.objects, dialect_for("v1.35"), list_kinds=loaded.list_kinds)
    sched = Scheduler(snap)
    pod = next(p for p in snap.pending if p.key == "default/trainer")
    d = sched.diagnose(pod)
    assert d.scheduled  # no feature check before v1.36
    assert compute_remedies(snap, sched, d) == ([], [])


def test_a_new_node_of_a_pool_that_declares_the_feature_declares_it_too() -> None:
    # restart-ready's only node declares the feature but is full; a new node of that pool runs the same
    # kubelet, so scaling the pool is the safe fix (it used to fail NodeDeclaredFeatures in the what-if,
    # leaving only the risky kubelet changes). Pools that declare nothing still cannot be scaled into it.
    remedies, notes = remedies_for(CASE, "default/trainer")
    (scale,) = by_kind(remedies, "scale-pool")
    assert scale.details["pool"] == "restart-ready"
    assert scale.safety == SAFE
    assert remedies[0] is scale  # a safe change ranks before the risky node-side ones
    assert not any(n.startswith("pool restart-ready: no scale-up") for n in notes)
    for pool in ("workers-v135", "workers-v136"):
        (line,) = [n for n in notes if n.startswith(f"pool {pool}: no scale-up")]
        assert "NodeDeclaredFeatures" in line
