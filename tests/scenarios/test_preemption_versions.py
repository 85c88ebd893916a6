"""DefaultPreemption across v1.31-v1.35: which nodes are candidates, the nested FitError, PDB ordering, victims
with `preemptionPolicy: Never`, and the preemptor's own hostPort / ReadWriteOncePod claim.

Derived from noderesources/fit.go Filter (v1.34: UU when a request exceeds the node's allocatable; v1.33 and
older: always U), preemption.go Preempt/findCandidates (only U nodes are dry-run; the nested FitError marks
every other node `Preemption is not helpful for scheduling`), default_preemption.go SelectVictimsOnNode (a
node without lower-priority pods: `No preemption victims found for incoming pod`; still not fitting after
removing them all: that filter's reasons) and pickOneNodeForPreemption (fewest PDB violations first).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scenarios.helpers import diagnose, diagnose_all, node, pod, scenario

DRA = "no new claims to deallocate, "


def _oversized() -> str:
    """n1 is smaller than the request (cpu 2 < 3); n2 is big enough but its lower-priority pod is not
    enough to free room (a higher-priority pod keeps 1500m)."""
    return scenario(
        node("n1", cpu="2"),
        node("n2", cpu="4"),
        pod("small", node_name="n1", cpu="100m", priority=0),
        pod("low", node_name="n2", cpu="2", priority=0),
        pod("high", node_name="n2", cpu="1500m", priority=1000),
        pod("p", cpu="3", priority=100),
    )


@pytest.mark.parametrize(
    ("version", "want"),
    [
        pytest.param(
            "v1.31.8",
            "0/2 nodes are available: 2 Insufficient cpu. "
            "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
            id="v1.31: the too-small node is U, dry-run, and still says Insufficient cpu without its victims",
        ),
        pytest.param(
            "v1.32.2",
            "0/2 nodes are available: 2 Insufficient cpu. "
            "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
            id="v1.32: same",
        ),
        pytest.param(
            "v1.33.3",
            "0/2 nodes are available: 2 Insufficient cpu. "
            "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
            id="v1.33: same",
        ),
        pytest.param(
            "v1.34.1",
            "0/2 nodes are available: 2 Insufficient cpu. "
            + DRA
            + "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling.",
            id="v1.34: request above allocatable is UU, so the small node is not helpful",
        ),
        pytest.param(
            "v1.35.4",
            "0/2 nodes are available: 2 Insufficient cpu. "
            + DRA
            + "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling.",
            id="v1.35: same as v1.34",
        ),
    ],
)
def test_request_above_allocatable(tmp_path: Path, version: str, want: str) -> None:
    d = diagnose(tmp_path, _oversized(), "default/p", version)
    assert d.message == want
    assert d.preemption is None


@pytest.mark.parametrize(
    ("version", "want"),
    [
        pytest.param(
            "v1.33.3",
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
            "1 Insufficient cpu, 1 No preemption victims found for incoming pod.",
            id="v1.33: the empty too-small node is a candidate without victims",
        ),
        pytest.param(
            "v1.34.1",
            "0/2 nodes are available: 2 Insufficient cpu. "
            + DRA
            + "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling.",
            id="v1.34: the empty too-small node is not helpful",
        ),
    ],
)
def test_too_small_node_without_pods(tmp_path: Path, version: str, want: str) -> None:
    text = scenario(
        node("n1", cpu="2"),
        node("n2", cpu="4"),
        pod("low", node_name="n2", cpu="2", priority=0),
        pod("high", node_name="n2", cpu="1500m", priority=1000),
        pod("p", cpu="3", priority=100),
    )
    assert diagnose(tmp_path, text, "default/p", version).message == want


def _pdb(name: str, app: str, allowed: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}},
        "status": {
            "disruptionsAllowed": allowed,
            "currentHealthy": 1,
            "desiredHealthy": 1,
            "expectedPods": 1,
        },
    }


def test_pdb_protected_pod_is_reprieved_first(tmp_path: Path) -> None:
    """One node, two equal victims; one is PDB-protected (0 disruptions allowed). PDB-violating pods are
    reprieved first, so `db` goes back and `web` (the more important one by start time!) is evicted."""
    text = scenario(
        node("n1", cpu="2"),
        _pdb("db", "db", 0),
        pod("db", node_name="n1", cpu="1", priority=0, labels={"app": "db"}, start="2025-01-02T00:00:00Z"),
        pod("web", node_name="n1", cpu="1", priority=0, labels={"app": "web"}, start="2025-01-01T00:00:00Z"),
        pod("p", cpu="1", priority=100),
    )
    d = diagnose(tmp_path, text, "default/p")
    assert d.preemption is not None
    assert (d.preemption.nominated_node, [v.key for v in d.preemption.victims]) == ("n1", ["default/web"])
    assert d.preemption.pdb_violations == 0


def test_fewest_pdb_violations_beat_fewer_victims(tmp_path: Path) -> None:
    """n1 needs one PDB-violating victim, n2 two unprotected ones: the first criterion (violations) picks n2."""
    text = scenario(
        node("n1", cpu="2"),
        node("n2", cpu="2"),
        _pdb("db", "db", 0),
        pod("db", node_name="n1", cpu="2", priority=0, labels={"app": "db"}),
        pod("w1", node_name="n2", cpu="1", priority=0, labels={"app": "web"}),
        pod("w2", node_name="n2", cpu="1", priority=0, labels={"app": "web"}),
        pod("p", cpu="2", priority=100),
    )
    d = diagnose(tmp_path, text, "default/p")
    assert d.preemption is not None
    assert d.preemption.nominated_node == "n2"
    assert sorted(v.key for v in d.preemption.victims) == ["default/w1", "default/w2"]


def test_victims_with_preemption_policy_never_are_evicted(tmp_path: Path) -> None:
    """preemptionPolicy only limits what the pod may do as a preemptor; as a victim only priority counts
    (isPreemptionAllowed)."""
    text = scenario(
        node("n1", cpu="2"),
        pod("meek", node_name="n1", cpu="2", priority=0, preemptionPolicy="Never"),
        pod("p", cpu="1", priority=100),
        pod("never", cpu="1", priority=100, preemptionPolicy="Never"),
    )
    r = diagnose_all(tmp_path, text, "v1.35.4")
    d = r["default/p"]
    assert d.preemption is not None
    assert [v.key for v in d.preemption.victims] == ["default/meek"]
    assert d.message == "0/1 nodes are available: 1 Insufficient cpu."
    assert r["default/never"].message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        + DRA
        + "preemption: not eligible due to preemptionPolicy=Never."
    )


def test_preemptor_host_port_frees_with_its_holder(tmp_path: Path) -> None:
    """The hostPort holder on n1 is of lower priority: removing it frees the port (NodeInfo.RemovePod drops
    its ports). On n2 the holder outranks the pod: no victims."""
    port = [{"containerPort": 8080, "hostPort": 8080}]

    def with_port(p: dict[str, Any]) -> dict[str, Any]:
        p["spec"]["containers"][0]["ports"] = port
        return p

    text = scenario(
        node("n1"),
        node("n2"),
        with_port(pod("holder-low", node_name="n1", cpu="100m", priority=0)),
        with_port(pod("holder-high", node_name="n2", cpu="100m", priority=1000)),
        with_port(pod("p", cpu="100m", priority=100)),
    )
    d = diagnose(tmp_path, text, "default/p", "v1.33.3")
    assert (
        d.message == "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."
    )
    assert d.preemption is not None
    assert (d.preemption.nominated_node, [v.key for v in d.preemption.victims]) == (
        "n1",
        ["default/holder-low"],
    )


def _rwop(holder_priority: int) -> str:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-data"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOncePod"],
            "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
            "claimRef": {"namespace": "default", "name": "data"},
            "storageClassName": "sc",
        },
        "status": {"phase": "Bound"},
    }
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "data",
            "namespace": "default",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
        },
        "spec": {
            "accessModes": ["ReadWriteOncePod"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeName": "pv-data",
            "storageClassName": "sc",
        },
        "status": {"phase": "Bound"},
    }
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "sc"},
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    vol = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    return scenario(
        node("n1"),
        node("n2"),
        node("n3"),
        pv,
        pvc,
        sc,
        pod("holder", node_name="n1", cpu="100m", priority=holder_priority, volumes=vol),
        pod("other", node_name="n2", cpu="100m", priority=0),
        pod("p", cpu="1", priority=100, volumes=vol),
    )


@pytest.mark.parametrize(
    ("version", "reason", "dra"),
    [
        pytest.param(
            "v1.33.3",
            "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode",
            "",
            id="v1.33 wording",
        ),
        pytest.param(
            "v1.34.1",
            "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use "
            "by another pod",
            DRA,
            id="v1.34 wording",
        ),
    ],
)
def test_rwop_claim_in_use_rejects_every_node(tmp_path: Path, version: str, reason: str, dra: str) -> None:
    """VolumeRestrictions counts RWOP users cluster-wide at PreFilter, so every node is U. Evicting the
    lower-priority holder (RemovePod lowers the count on n1's cloned state) makes n1 fit; on n2 the count is
    untouched by removing `other`, so n2 still fails with the same reason."""
    d = diagnose(tmp_path, _rwop(0), "default/p", version)
    assert d.message == f"0/3 nodes are available: 3 {reason}."
    assert d.preemption is not None
    assert (d.preemption.nominated_node, [v.key for v in d.preemption.victims]) == ("n1", ["default/holder"])

    d = diagnose(tmp_path, _rwop(1000), "default/p", version)
    assert d.message == (
        f"0/3 nodes are available: 3 {reason}. {dra}preemption: 0/3 nodes are available: "
        f"1 {reason}, 2 No preemption victims found for incoming pod."
    )
