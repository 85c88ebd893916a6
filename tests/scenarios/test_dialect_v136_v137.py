"""v1.36 and v1.37 dialect properties, each run on both sides of the release that changed it.

Expected values are derived by hand from upstream at the tags (k8s.io/kubernetes v1.35.4, v1.36.3,
v1.37.2), named per test: the plugin sources, apis/config/v1/default_plugins.go, preemption.go.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.profiles import default_profile
from kdiagnose.versions import dialect_for
from tests.scenarios.helpers import diagnose, node, pod, scenario

Obj = dict[str, Any]


def test_node_declared_features_joins_the_default_profile_last_in_v136() -> None:
    # default_plugins.go applyFeatureGates appends it after DefaultBinder; DynamicResources goes before
    # DefaultPreemption, so NodeDeclaredFeatures is the last PreFilter and Filter.
    assert n.NODE_DECLARED_FEATURES not in default_profile(dialect_for("v1.35.4")).filter
    for v in ("v1.36.3", "v1.37.2"):
        p = default_profile(dialect_for(v))
        assert p.filter[-2:] == [n.DYNAMIC_RESOURCES, n.NODE_DECLARED_FEATURES]
        assert p.pre_filter[-1] == n.NODE_DECLARED_FEATURES
        assert n.NODE_DECLARED_FEATURES not in p.score


def test_node_name_runs_before_node_unschedulable_from_v137() -> None:
    assert default_profile(dialect_for("v1.36.3")).filter[:2] == [n.NODE_UNSCHEDULABLE, n.NODE_NAME]
    assert default_profile(dialect_for("v1.37.2")).filter[:2] == [n.NODE_NAME, n.NODE_UNSCHEDULABLE]


RESTART_ALL = {
    "name": "c",
    "image": "registry.k8s.io/pause:3.9",
    "restartPolicy": "Never",
    "restartPolicyRules": [
        {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
    ],
    "resources": {"requests": {"cpu": "100m"}},
}


def _ndf_nodes() -> list[Obj]:
    declared = node("new")
    declared["status"]["declaredFeatures"] = ["RestartAllContainersOnContainerExits"]
    return [node("old"), declared]


@pytest.mark.parametrize(
    ("version", "message", "old_verdict"),
    [
        pytest.param("v1.35.4", None, None, id="v1.35: not in the profile"),
        pytest.param(
            "v1.36.3",
            None,
            {"plugin": "NodeDeclaredFeatures", "reason": "node(s) didn't match Pod's required features"},
            id="v1.36",
        ),
        pytest.param(
            "v1.37.2",
            None,
            {"plugin": "NodeDeclaredFeatures", "reason": "node(s) didn't match Pod's required features"},
            id="v1.37",
        ),
    ],
)
def test_pod_requiring_a_declared_feature(
    tmp_path: Path, version: str, message: str | None, old_verdict: dict[str, str] | None
) -> None:
    p = pod("web")
    p["spec"]["containers"] = [RESTART_ALL]
    d = diagnose(tmp_path, scenario(*_ndf_nodes(), p), "default/web", version)
    assert d.scheduled
    old = d.verdicts["old"]
    if old_verdict is None:
        assert old.ok
        assert sorted(d.feasible) == ["new", "old"]
    else:
        assert (old.plugin, old.reasons) == (old_verdict["plugin"], (old_verdict["reason"],))
        assert old.code.label == "UnschedulableAndUnresolvable"
        assert d.feasible == ["new"] or sorted(d.feasible) == ["new"]


def test_no_node_declares_the_feature_message(tmp_path: Path) -> None:
    p = pod("web")
    p["spec"]["containers"] = [RESTART_ALL]
    d = diagnose(tmp_path, scenario(node("a"), node("b"), p), "default/web", "v1.37.2")
    # UnschedulableAndUnresolvable everywhere: preemption is not helpful on any node. v1.37's DynamicResources
    # PostFilter adds no reason for a pod without claims (the real v1.37.2 scheduler, tests/e2e).
    assert d.message == (
        "0/2 nodes are available: 2 node(s) didn't match Pod's required features. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    d136 = diagnose(tmp_path, scenario(node("a"), node("b"), p), "default/web", "v1.36.5")
    assert d136.message == (
        "0/2 nodes are available: 2 node(s) didn't match Pod's required features. no new claims to "
        "deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def _preemption_case() -> str:
    return scenario(
        node("n1", cpu="2"),
        node("n2", cpu="2"),
        pod("low1", node_name="n1", cpu="1500m", priority=1, start="2026-01-01T00:00:00Z"),
        pod("low2", node_name="n2", cpu="1500m", priority=1, start="2026-01-02T00:00:00Z"),
        pod("vip", cpu="1", priority=1000),
    )


@pytest.mark.parametrize(
    ("version", "tail"),
    [
        # v1.36 Evaluator.Preempt returns Success without a message: nothing follows the histogram.
        pytest.param("v1.36.3", "", id="v1.36"),
        # v1.37 preemption.go: fmt.Sprintf("found a potential placement for pod on node %v, preempting %d
        # victims"), prefixed by DefaultPreemption's "preemption: "; DynamicResources' reasons are not added
        # because RunPostFilterPlugins returns the first Success as is.
        pytest.param(
            "v1.37.2",
            " preemption: found a potential placement for pod on node n2, preempting 1 victims",
            id="v1.37",
        ),
    ],
)
def test_successful_preemption_message(tmp_path: Path, version: str, tail: str) -> None:
    d = diagnose(tmp_path, _preemption_case(), "default/vip", version)
    assert not d.scheduled
    assert d.preemption is not None and d.preemption.nominated_node == "n2"
    assert [v.key for v in d.preemption.victims] == ["default/low2"]
    assert d.message == "0/2 nodes are available: 2 Insufficient cpu." + tail


def _csi_case(prevent: bool | None, on_node: bool) -> str:
    driver: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": "ebs.csi.aws.com"},
        "spec": {} if prevent is None else {"preventPodSchedulingIfMissing": prevent},
    }
    csinode: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": "n1"},
        "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1"}] if on_node else []},
    }
    sc: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "gp3"},
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "Immediate",
    }
    pv: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv1"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "gp3",
            "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
            "claimRef": {"namespace": "default", "name": "data"},
        },
        "status": {"phase": "Bound"},
    }
    pvc: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "data",
            "namespace": "default",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "gp3",
            "volumeName": "pv1",
            "resources": {"requests": {"storage": "1Gi"}},
        },
        "status": {"phase": "Bound"},
    }
    p = pod("db", cpu="100m", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
    return scenario(node("n1"), driver, csinode, sc, pv, pvc, p)


@pytest.mark.parametrize(
    ("version", "prevent", "on_node", "want"),
    [
        pytest.param("v1.36.3", True, False, None, id="v1.36: VolumeLimitScaling off"),
        pytest.param(
            "v1.37.2", True, False, "ebs.csi.aws.com CSI driver is not installed on the node", id="v1.37"
        ),
        pytest.param("v1.37.2", True, True, None, id="v1.37: driver on the node"),
        pytest.param("v1.37.2", False, False, None, id="v1.37: not opted in"),
        pytest.param("v1.37.2", None, False, None, id="v1.37: unset means not opted in"),
    ],
)
def test_csi_driver_not_installed(
    tmp_path: Path, version: str, prevent: bool | None, on_node: bool, want: str | None
) -> None:
    # nodevolumelimits/csi.go Filter, checkCSIDriverOnNode (v1.37.2): Unschedulable, the driver named.
    d = diagnose(tmp_path, _csi_case(prevent, on_node), "default/db", version)
    v = d.verdicts["n1"]
    if want is None:
        assert v.ok
    else:
        assert (v.plugin, v.code.label, v.reasons) == ("NodeVolumeLimits", "Unschedulable", (want,))
        dra = "" if version.startswith("v1.37") else "no new claims to deallocate, "
        assert d.message == (
            f"0/1 nodes are available: 1 {want}. {dra}preemption: 0/1 nodes are "
            "available: 1 No preemption victims found for incoming pod."
        )


def _image_case() -> str:
    big = 500 * 1024 * 1024
    images = [
        {"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 1},
        {"names": ["example.com/model:v1"], "sizeBytes": big},
    ]
    p = pod("infer", cpu="100m", volumes=[{"name": "m", "image": {"reference": "example.com/model:v1"}}])
    return scenario(node("a", images=images), node("b"), p)


@pytest.mark.parametrize(
    ("version", "want"),
    [
        # v1.35: image volumes are not counted: the pause image alone is below the 23 MiB minimum.
        pytest.param("v1.35.4", 0, id="v1.35"),
        # v1.36: 500 MiB * (1/2 nodes) = 250 MiB summed, threshold of 1 container (1000 MiB):
        # 100 * (250 - 23) / (1000 - 23) = 23.
        pytest.param("v1.36.3", 23, id="v1.36"),
        # v1.37: the image volume counts as a second image: threshold 2000 MiB: 100 * 227 / 1977 = 11.
        pytest.param("v1.37.2", 11, id="v1.37"),
    ],
)
def test_image_locality_counts_image_volumes(tmp_path: Path, version: str, want: int) -> None:
    d = diagnose(tmp_path, _image_case(), "default/infer", version)
    assert d.scores["a"].plugins["ImageLocality"].score == want


def test_volume_binding_scores_every_pod_from_v137(tmp_path: Path) -> None:
    # volume_binding.go PreScore: Skip without a scorer (StorageCapacityScoring off, v1.36); with it
    # (v1.37) PreScore succeeds and Score is 0 for a pod without claims (no podVolumesByNode entry).
    text = scenario(node("a"), node("b"), pod("web", cpu="100m"))
    assert "VolumeBinding" not in diagnose(tmp_path, text, "default/web", "v1.36.3").scores["a"].plugins
    got = diagnose(tmp_path, text, "default/web", "v1.37.2").scores["a"].plugins["VolumeBinding"]
    assert (got.score, got.weight) == (0, 1)


def _wffc_case() -> str:
    sc: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local"},
        "provisioner": "local.csi.example.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    driver: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": "local.csi.example.com"},
        "spec": {"storageCapacity": True},
    }
    caps = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIStorageCapacity",
            "metadata": {"name": f"cap-{n_}", "namespace": "default"},
            "storageClassName": "local",
            "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": n_}},
            "capacity": cap,
        }
        for n_, cap in (("a", "100Gi"), ("b", "40Gi"))
    ]
    pvc: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "scratch", "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "resources": {"requests": {"storage": "10Gi"}},
        },
        "status": {"phase": "Pending"},
    }
    p = pod("job", cpu="100m", volumes=[{"name": "s", "persistentVolumeClaim": {"claimName": "scratch"}}])
    return scenario(node("a"), node("b"), sc, driver, *caps, pvc, p)


def test_storage_capacity_scoring_prefers_the_emptier_node(tmp_path: Path) -> None:
    # Default shape (0 -> 10, 100 -> 0, x10): a: 10Gi/100Gi = 10% -> 90; b: 10Gi/40Gi = 25% -> 75.
    d = diagnose(tmp_path, _wffc_case(), "default/job", "v1.37.2")
    assert d.scores["a"].plugins["VolumeBinding"].score == 90
    assert d.scores["b"].plugins["VolumeBinding"].score == 75
    assert (
        "VolumeBinding" not in diagnose(tmp_path, _wffc_case(), "default/job", "v1.36.3").scores["a"].plugins
    )


@pytest.mark.parametrize(
    ("version", "dra"),
    [
        pytest.param("v1.36.3", "no new claims to deallocate, ", id="v1.36: DynamicResources' reason"),
        # dynamicresources.go v1.37.2 PostFilter: `return nil, fwk.NewStatus(fwk.Unschedulable)` for a pod
        # without claims; RunPostFilterPlugins collects no reason. What the real v1.37.2 scheduler wrote in
        # tests/e2e (FailedScheduling events of the golden sample).
        pytest.param("v1.37.2", "", id="v1.37: none"),
    ],
)
def test_dra_post_filter_reason_for_a_pod_without_claims(tmp_path: Path, version: str, dra: str) -> None:
    d = diagnose(tmp_path, scenario(node("a", cpu="1"), pod("big", cpu="2")), "default/big", version)
    assert d.message == (
        f"0/1 nodes are available: 1 Insufficient cpu. {dra}preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling."
    )
