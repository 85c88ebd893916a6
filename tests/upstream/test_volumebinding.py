"""Port of upstream volumebinding tests (v1.34): binder_test.go TestFindPodVolumesWithoutProvisioning,
TestFindPodVolumesWithProvisioning, TestFindPodVolumesWithCSIMigration and TestCapacity (the node verdicts
FindPodVolumes gives), and volume_binding_test.go TestVolumeBinding's PreFilter/Filter statuses.

The binder fixtures mirror makeTestPVC / makeTestPV / newTestBinder's StorageClasses (namespace `testns`,
node label `nodeKey`). Upstream's `shouldFail` is an error from GetPodVolumes (our PreFilter rejection) or
from FindPodVolumes (our Filter Error). Skipped as Go-only mechanics: TestAssumePodVolumes,
TestRevertAssumedPodVolumes, TestBindAPIUpdate, TestCheckBindings, TestBindPodVolumes, TestFindAssumeVolumes
(assume cache / API binding) and the scoring cases (VolumeCapacityPriority/StorageCapacityScoring is off).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import Code, CycleState, Handle, Status
from kdiagnose.scheduler.plugins.volumebinding.volume_binding import VolumeBinding
from kdiagnose.versions import dialect_for
from tests.plugins.volume_factories import V134, snapshot

Obj = dict[str, Any]

BIND = "node(s) didn't find available persistent volumes to bind"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
NO_SPACE = "node(s) did not have enough free storage"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

PROVISIONER = "test-provisioner"
NODE_KEY = "nodeKey"
WAIT, IMMEDIATE_CLASS, WAIT_PROV, TOPO_MISMATCH = (
    "waitClass",
    "immediateClass",
    "waitClassWithProvisioner",
    "topoMismatchClass",
)
ANN_SELECTED = "volume.kubernetes.io/selected-node"
ANN_BOUND = "pv.kubernetes.io/bind-completed"

CLASSES: list[Obj] = [
    {
        "kind": "StorageClass",
        "metadata": {"name": WAIT_PROV},
        "volumeBindingMode": "WaitForFirstConsumer",
        "provisioner": PROVISIONER,
        "allowedTopologies": [
            {"matchLabelExpressions": [{"key": NODE_KEY, "values": ["node1", "reference-value"]}]}
        ],
    },
    {"kind": "StorageClass", "metadata": {"name": IMMEDIATE_CLASS}, "volumeBindingMode": "Immediate"},
    {
        "kind": "StorageClass",
        "metadata": {"name": WAIT},
        "volumeBindingMode": "WaitForFirstConsumer",
        "provisioner": "kubernetes.io/no-provisioner",
    },
    {
        "kind": "StorageClass",
        "metadata": {"name": TOPO_MISMATCH},
        "volumeBindingMode": "WaitForFirstConsumer",
        "provisioner": PROVISIONER,
        "allowedTopologies": [{"matchLabelExpressions": [{"key": NODE_KEY, "values": ["reference-value"]}]}],
    },
]


def test_pvc(name: str, size: str, node: str, state: str, pv_name: str, cls: str) -> Obj:
    """makeTestPVC; state is unbound / prebound / bound / selected."""
    ann: dict[str, str] = {}
    spec: Obj = {
        "resources": {"requests": {"storage": size}},
        "storageClassName": cls,
        "volumeMode": "Filesystem",
    }
    if state == "selected":
        ann[ANN_SELECTED] = node
    if state == "bound":
        ann[ANN_BOUND] = "yes"
    if state in ("bound", "prebound"):
        spec["volumeName"] = pv_name
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "testns", "uid": "pvc-uid", "annotations": ann},
        "spec": spec,
    }


def node_affinity(key: str, values: list[str]) -> Obj:
    return {
        "required": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": values}]}]
        }
    }


def test_pv(name: str, node: str, capacity: str, bound_to: Obj | None, cls: str) -> Obj:
    """makeTestPV."""
    spec: Obj = {
        "capacity": {"storage": capacity},
        "storageClassName": cls,
        "volumeMode": "Filesystem",
        "hostPath": {"path": "/tmp"},
    }
    meta: Obj = {"name": name}
    if node:
        spec["nodeAffinity"] = node_affinity(NODE_KEY, [node])
    if bound_to is not None:
        m = bound_to["metadata"]
        spec["claimRef"] = {"name": m["name"], "namespace": m["namespace"], "uid": m["uid"]}
        meta["annotations"] = {"pv.kubernetes.io/bound-by-controller": "yes"}
    return {"kind": "PersistentVolume", "metadata": meta, "spec": spec, "status": {"phase": "Available"}}


# These are not pytest tests despite the names (mirroring upstream's helpers).
test_pvc.__test__ = False  # type: ignore[attr-defined]
test_pv.__test__ = False  # type: ignore[attr-defined]

unboundPVC = test_pvc("unbound-pvc", "1G", "", "unbound", "", WAIT)
unboundPVC2 = test_pvc("unbound-pvc2", "5G", "", "unbound", "", WAIT)
preboundPVC = test_pvc("prebound-pvc", "1G", "", "prebound", "pv-node1a", WAIT)
boundPVC = test_pvc("bound-pvc", "1G", "", "bound", "pv-bound", WAIT)
immediateUnboundPVC = test_pvc("immediate-unbound-pvc", "1G", "", "unbound", "", IMMEDIATE_CLASS)
immediateBoundPVC = test_pvc("immediate-bound-pvc", "1G", "", "bound", "pv-bound-immediate", IMMEDIATE_CLASS)
provisionedPVC = test_pvc("provisioned-pvc", "1Gi", "", "unbound", "", WAIT_PROV)
noProvisionerPVC = test_pvc("no-provisioner-pvc", "1Gi", "", "unbound", "", WAIT)
topoMismatchPVC = test_pvc("topo-mismatch-pvc", "1Gi", "", "unbound", "", TOPO_MISMATCH)
selectedNodePVC = test_pvc("provisioned-pvc", "1Gi", "node1", "selected", "", WAIT_PROV)
boundMigrationPVC = test_pvc("pvc-migration-bound", "1G", "", "bound", "pv-migration-bound", WAIT)

POD_UID = "test-pod-uid"


def generic_pvc(owned: bool) -> Obj:
    pvc = test_pvc("test-pod-test-volume", "1G", "", "bound", "pv-bound", IMMEDIATE_CLASS)
    if owned:
        pvc["metadata"]["ownerReferences"] = [{"name": "test-pod", "uid": POD_UID, "controller": True}]
    return pvc


conflictingGenericPVC = generic_pvc(False)
correctGenericPVC = generic_pvc(True)
pvBoundGeneric = test_pv("pv-bound", "node1", "1G", correctGenericPVC, WAIT)
pvNode1a = test_pv("pv-node1a", "node1", "5G", None, WAIT)
pvNode1b = test_pv("pv-node1b", "node1", "10G", None, WAIT)
pvNode2 = test_pv("pv-node2", "node2", "1G", None, WAIT)
pvBound = test_pv("pv-bound", "node1", "1G", boundPVC, WAIT)
pvNode1aBound = test_pv("pv-node1a", "node1", "5G", unboundPVC, WAIT)
pvBoundImmediate = test_pv("pv-bound-immediate", "node1", "1G", immediateBoundPVC, IMMEDIATE_CLASS)
pvBoundImmediateNode2 = test_pv("pv-bound-immediate", "node2", "1G", immediateBoundPVC, IMMEDIATE_CLASS)


def migration_pv(claim: Obj) -> Obj:
    """makeTestPVForCSIMigration: a GCE PD with zone labels and no node affinity."""
    pv = test_pv("pv-migration-bound", "node1", "1G", claim, WAIT)
    del pv["spec"]["nodeAffinity"]
    del pv["spec"]["hostPath"]
    pv["metadata"]["labels"] = {
        "failure-domain.beta.kubernetes.io/zone": "us-east-1",
        "failure-domain.beta.kubernetes.io/region": "us-east-1a",
    }
    pv["spec"]["gcePersistentDisk"] = {
        "pdName": "test-disk",
        "fsType": "ext4",
        "partition": 0,
        "readOnly": False,
    }
    return pv


migrationPVBound = migration_pv(boundMigrationPVC)


def make_pod(pvcs: list[Obj] | None = None, volumes: list[Obj] | None = None) -> Pod:
    vols = list(volumes or [])
    for c in pvcs or []:
        name = c["metadata"]["name"]
        vols.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
    return Pod(
        {
            "metadata": {"name": "test-pod", "namespace": "testns", "uid": POD_UID},
            "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": vols},
        }
    )


def make_node(name: str, labels: dict[str, str]) -> Node:
    return Node({"metadata": {"name": name, "labels": labels}, "status": {"allocatable": {"pods": "110"}}})


NODE1 = make_node("node1", {NODE_KEY: "node1"})
NODE2 = make_node("node2", {NODE_KEY: "node2"})


def find_pod_volumes(p: Pod, node: Node, objs: list[Obj]) -> tuple[Status, Status | None]:
    snap = snapshot([node], [], [*CLASSES, *objs], V134)
    plugin = VolumeBinding(Handle(snap, V134, {}))
    state = CycleState()
    _, pre = plugin.pre_filter(state, p)
    if not pre.ok:
        return pre, None
    return pre, plugin.filter(state, p, snap.node_info_by_name[node.name])


# (pvs, pod PVCs, cache PVCs or None, pod or None, expected reasons, should fail)
WITHOUT_PROVISIONING = [
    pytest.param([], [], None, make_pod(), [], False, id="no-volumes"),
    pytest.param([], [], None, make_pod(volumes=[{"name": "e", "emptyDir": {}}]), [], False, id="no-pvcs"),
    pytest.param([], [boundPVC], [], None, [], True, id="pvc-not-found"),
    pytest.param([pvBound], [boundPVC], None, None, [], False, id="bound-pvc"),
    pytest.param([], [boundPVC], None, None, [PV_NOT_EXIST], False, id="bound-pvc,pv-not-exists"),
    pytest.param([pvNode1aBound], [preboundPVC], None, None, [], True, id="prebound-pvc"),
    pytest.param(
        [pvNode2, pvNode1a, pvNode1b], [unboundPVC], None, None, [], False, id="unbound-pvc,pv-same-node"
    ),
    pytest.param([pvNode2], [unboundPVC], None, None, [BIND], False, id="unbound-pvc,pv-different-node"),
    pytest.param(
        [pvNode1a, pvNode1b], [unboundPVC, unboundPVC2], None, None, [], False, id="two-unbound-pvcs"
    ),
    pytest.param(
        [pvNode1a, pvNode1b],
        [unboundPVC2, unboundPVC],
        None,
        None,
        [],
        False,
        id="two-unbound-pvcs,order-by-size",
    ),
    pytest.param(
        [pvNode1a], [unboundPVC, unboundPVC2], None, None, [BIND], False, id="two-unbound-pvcs,partial-match"
    ),
    pytest.param(
        [pvBound, pvNode1a], [unboundPVC, boundPVC], None, None, [], False, id="one-bound,one-unbound"
    ),
    pytest.param(
        [pvBound, pvNode2],
        [unboundPVC, boundPVC],
        None,
        None,
        [BIND],
        False,
        id="one-bound,one-unbound,no-match",
    ),
    pytest.param(
        [pvNode1a, pvNode1b], [unboundPVC, preboundPVC], None, None, [], True, id="one-prebound,one-unbound"
    ),
    pytest.param([pvBoundImmediate], [immediateBoundPVC], None, None, [], False, id="immediate-bound-pvc"),
    pytest.param(
        [pvBoundImmediateNode2],
        [immediateBoundPVC],
        None,
        None,
        [NODE_CONFLICT],
        False,
        id="immediate-bound-pvc-wrong-node",
    ),
    pytest.param([], [immediateUnboundPVC], None, None, [], True, id="immediate-unbound-pvc"),
    pytest.param(
        [pvBound],
        [immediateUnboundPVC, boundPVC],
        None,
        None,
        [],
        True,
        id="immediate-unbound-pvc,delayed-mode-bound",
    ),
    pytest.param(
        [],
        [immediateUnboundPVC, unboundPVC],
        None,
        None,
        [],
        True,
        id="immediate-unbound-pvc,delayed-mode-unbound",
    ),
    pytest.param(
        [],
        [],
        None,
        make_pod(volumes=[{"name": "no-such-pvc", "ephemeral": {"volumeClaimTemplate": {}}}]),
        [],
        True,
        id="generic-ephemeral,no-pvc",
    ),
    pytest.param(
        [pvBoundGeneric],
        [],
        [correctGenericPVC],
        make_pod(volumes=[{"name": "test-volume", "ephemeral": {"volumeClaimTemplate": {}}}]),
        [],
        False,
        id="generic-ephemeral,with-pvc",
    ),
    pytest.param(
        [pvBoundGeneric],
        [],
        [conflictingGenericPVC],
        make_pod(volumes=[{"name": "test-volume", "ephemeral": {"volumeClaimTemplate": {}}}]),
        [],
        True,
        id="generic-ephemeral,wrong-pvc",
    ),
]

DRIVERS = [
    pytest.param(None, id="no CSIDriver"),
    pytest.param(True, id="CSIDriver with capacity tracking"),
    pytest.param(False, id="CSIDriver without capacity tracking"),
]


def csi_driver(capacity: bool | None) -> list[Obj]:
    if capacity is None:
        return []
    return [{"kind": "CSIDriver", "metadata": {"name": PROVISIONER}, "spec": {"storageCapacity": capacity}}]


def check(pre: Status, filt: Status | None, reasons: list[str], should_fail: bool) -> None:
    if should_fail:
        # GetPodVolumes fails: PreFilter rejects; or FindPodVolumes errors: Filter's status is Error.
        assert (not pre.ok and pre.code != Code.SKIP) or (filt is not None and filt.code == Code.ERROR), (
            pre,
            filt,
        )
        return
    assert pre.ok or pre.code == Code.SKIP, pre
    if pre.code == Code.SKIP:
        assert reasons == []
        return
    assert filt is not None
    if reasons:
        assert filt.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert sorted(filt.reasons) == sorted(reasons)
    else:
        assert filt.ok, filt


@pytest.mark.parametrize("capacity", DRIVERS)
@pytest.mark.parametrize(
    ("pvs", "pod_pvcs", "cache_pvcs", "pod", "reasons", "should_fail"), WITHOUT_PROVISIONING
)
def test_find_pod_volumes_without_provisioning(
    capacity: bool | None,
    pvs: list[Obj],
    pod_pvcs: list[Obj],
    cache_pvcs: list[Obj] | None,
    pod: Pod | None,
    reasons: list[str],
    should_fail: bool,
) -> None:
    claims = pod_pvcs if cache_pvcs is None else cache_pvcs
    p = pod if pod is not None else make_pod(pod_pvcs)
    pre, filt = find_pod_volumes(p, NODE1, [*pvs, *claims, *csi_driver(capacity)])
    check(pre, filt, reasons, should_fail)


# (pvs, pod PVCs, expected reasons, should fail, needs capacity)
WITH_PROVISIONING = [
    pytest.param([], [provisionedPVC], [], False, True, id="one-provisioned"),
    pytest.param(
        [pvNode1a],
        [unboundPVC, provisionedPVC],
        [],
        False,
        True,
        id="two-unbound-pvcs,one-matched,one-provisioned",
    ),
    pytest.param([pvBound], [boundPVC, provisionedPVC], [], False, True, id="one-bound,one-provisioned"),
    pytest.param([pvBound], [boundPVC, selectedNodePVC], [], False, True, id="one-binding,one-selected-node"),
    pytest.param([], [immediateUnboundPVC], [], True, False, id="immediate-unbound-pvc"),
    pytest.param(
        [pvBoundImmediate],
        [immediateBoundPVC, provisionedPVC],
        [],
        False,
        True,
        id="one-immediate-bound,one-provisioned",
    ),
    pytest.param([], [noProvisionerPVC], [BIND], False, False, id="invalid-provisioner"),
    pytest.param([], [topoMismatchPVC], [BIND], False, False, id="volume-topology-unsatisfied"),
]


@pytest.mark.parametrize("capacity", DRIVERS)
@pytest.mark.parametrize(("pvs", "pod_pvcs", "reasons", "should_fail", "needs_capacity"), WITH_PROVISIONING)
def test_find_pod_volumes_with_provisioning(
    capacity: bool | None,
    pvs: list[Obj],
    pod_pvcs: list[Obj],
    reasons: list[str],
    should_fail: bool,
    needs_capacity: bool,
) -> None:
    pre, filt = find_pod_volumes(make_pod(pod_pvcs), NODE1, [*pvs, *pod_pvcs, *csi_driver(capacity)])
    if needs_capacity and capacity is True:
        # Without CSIStorageCapacity objects, provisioning is blocked.
        reasons = [*reasons, NO_SPACE]
    check(pre, filt, reasons, should_fail)


def csinode(annotation: str) -> Obj:
    return {
        "kind": "CSINode",
        "metadata": {
            "name": "node1",
            "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": annotation},
        },
        "spec": {"drivers": []},
    }


@pytest.mark.parametrize(
    ("zone", "csinodes", "reasons"),
    [
        pytest.param("us-east-1", [csinode("kubernetes.io/gce-pd")], [], id="pvc-bound"),
        pytest.param("us-east-1", [csinode("")], [], id="pvc-bound,csinode-not-migrated"),
        pytest.param("us-east-1", [], [], id="pvc-bound,missing-csinode"),
        pytest.param(
            "us-east-2",
            [csinode("kubernetes.io/gce-pd")],
            [NODE_CONFLICT],
            id="pvc-bound,node-different-zone",
        ),
    ],
)
def test_find_pod_volumes_with_csi_migration(zone: str, csinodes: list[Obj], reasons: list[str]) -> None:
    node = make_node("node1", {"topology.gke.io/zone": zone})
    pre, filt = find_pod_volumes(
        make_pod([boundMigrationPVC]), node, [migrationPVBound, boundMigrationPVC, *csinodes]
    )
    check(pre, filt, reasons, False)


def capacity_obj(cls: str, node: Node | None, capacity: str, maximum: str) -> Obj:
    c: Obj = {
        "kind": "CSIStorageCapacity",
        "metadata": {"name": "net", "namespace": "kube-system"},
        "storageClassName": cls,
        "nodeTopology": {},
    }
    if node is not None:
        c["nodeTopology"]["matchLabels"] = {NODE_KEY: node.labels[NODE_KEY]}
    if capacity:
        c["capacity"] = capacity
    if maximum:
        c["maximumVolumeSize"] = maximum
    return c


@pytest.mark.parametrize("opt_in", [True, False])
@pytest.mark.parametrize(
    ("capacities", "reasons"),
    [
        pytest.param([capacity_obj(WAIT_PROV, None, "1Gi", "")], [], id="network-attached"),
        pytest.param([capacity_obj(WAIT_PROV, NODE1, "1Gi", "")], [], id="local-storage"),
        pytest.param(
            [
                capacity_obj(WAIT_PROV, None, "1Gi", ""),
                capacity_obj(WAIT_PROV, NODE2, "1Gi", ""),
                capacity_obj(WAIT_PROV, NODE1, "1Gi", ""),
            ],
            [],
            id="multiple",
        ),
        pytest.param([], [NO_SPACE], id="no-storage"),
        pytest.param([capacity_obj(WAIT_PROV, NODE2, "1Gi", "")], [NO_SPACE], id="wrong-node"),
        pytest.param([capacity_obj(WAIT, NODE1, "1Gi", "")], [NO_SPACE], id="wrong-storage-class"),
        pytest.param([capacity_obj(WAIT_PROV, NODE1, "1Mi", "")], [NO_SPACE], id="insufficient-storage"),
        pytest.param(
            [capacity_obj(WAIT_PROV, NODE1, "1Gi", "1Mi")], [NO_SPACE], id="insufficient-volume-size"
        ),
        pytest.param([capacity_obj(WAIT_PROV, NODE1, "0Mi", "")], [NO_SPACE], id="zero-storage"),
        pytest.param([capacity_obj(WAIT_PROV, NODE1, "", "0Mi")], [NO_SPACE], id="zero-volume-size"),
        pytest.param([capacity_obj(WAIT_PROV, NODE1, "", "")], [NO_SPACE], id="nil-storage"),
    ],
)
def test_capacity(capacities: list[Obj], reasons: list[str], opt_in: bool) -> None:
    objs = [provisionedPVC, *csi_driver(opt_in), *capacities]
    pre, filt = find_pod_volumes(make_pod([provisionedPVC]), NODE1, objs)
    check(pre, filt, reasons if opt_in else [], False)


# ---------------------------------------------------------------- volume_binding_test.go TestVolumeBinding


def vb_pvc(name: str, cls: str, *, bound_pv: str = "", phase: str = "", storage: str = "") -> Obj:
    """makePVC(name, sc) in test_utils.go (namespace default), withBoundPV / withPhase / withRequestStorage."""
    meta: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}", "annotations": {}}
    spec: Obj = {"storageClassName": cls}
    if bound_pv:
        spec["volumeName"] = bound_pv
        meta["annotations"][ANN_BOUND] = "yes"
    if storage:
        spec["resources"] = {"requests": {"storage": storage}}
    out: Obj = {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}
    if phase:
        out["status"] = {"phase": phase}
    return out


def vb_pv(name: str, cls: str, *, capacity: str = "", affinity: dict[str, list[str]] | None = None) -> Obj:
    spec: Obj = {"storageClassName": cls, "hostPath": {"path": "/tmp"}}
    if capacity:
        spec["capacity"] = {"storage": capacity}
    if affinity:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": k, "operator": "In", "values": v} for k, v in affinity.items()
                        ]
                    }
                ]
            }
        }
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": spec,
        "status": {"phase": "Available"},
    }


VB_CLASSES: list[Obj] = [
    {"kind": "StorageClass", "metadata": {"name": "immediate-sc"}, "volumeBindingMode": "Immediate"},
    {"kind": "StorageClass", "metadata": {"name": "wait-sc"}, "volumeBindingMode": "WaitForFirstConsumer"},
    {
        "kind": "StorageClass",
        "metadata": {"name": "wait-hdd-sc"},
        "volumeBindingMode": "WaitForFirstConsumer",
    },
]


def vb_node(name: str, labels: dict[str, str] | None = None) -> Node:
    # makeNode sets the hostname label.
    return make_node(name, {"kubernetes.io/hostname": name, **(labels or {})})


def vb_pod(*claims: str) -> Pod:
    return Pod(
        {
            "metadata": {"name": "pod-a", "namespace": "default", "uid": "pod-a"},
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims],
            },
        }
    )


LOCAL_PVS = [
    vb_pv("pv-a-0", "wait-sc", capacity="200Gi", affinity={"kubernetes.io/hostname": ["node-a"]}),
    vb_pv("pv-a-1", "wait-sc", capacity="200Gi", affinity={"kubernetes.io/hostname": ["node-a"]}),
    vb_pv("pv-b-0", "wait-sc", capacity="100Gi", affinity={"kubernetes.io/hostname": ["node-b"]}),
    vb_pv("pv-b-1", "wait-sc", capacity="100Gi", affinity={"kubernetes.io/hostname": ["node-b"]}),
]
LOCAL_PVS_HDD = [
    *LOCAL_PVS[:2],
    vb_pv("pv-a-2", "wait-hdd-sc", capacity="200Gi", affinity={"kubernetes.io/hostname": ["node-a"]}),
    vb_pv("pv-a-3", "wait-hdd-sc", capacity="200Gi", affinity={"kubernetes.io/hostname": ["node-a"]}),
    *LOCAL_PVS[2:],
    vb_pv("pv-b-2", "wait-hdd-sc", capacity="100Gi", affinity={"kubernetes.io/hostname": ["node-b"]}),
    vb_pv("pv-b-3", "wait-hdd-sc", capacity="100Gi", affinity={"kubernetes.io/hostname": ["node-b"]}),
]
ZONES = {"a": "region-a", "b": "region-b", "c": "region-c"}
ZONAL_NODES = [
    vb_node(
        f"zone-{z}-node-{n}", {"topology.kubernetes.io/region": r, "topology.kubernetes.io/zone": f"zone-{z}"}
    )
    for z, r in ZONES.items()
    for n in ("a", "b")
]
ZONAL_PVS = [
    vb_pv(
        f"pv-{z}-{i}",
        "wait-sc",
        capacity=cap,
        affinity={
            "topology.kubernetes.io/region": [f"region-{z}"],
            "topology.kubernetes.io/zone": [f"zone-{z}"],
        },
    )
    for z, cap in (("a", "200Gi"), ("b", "100Gi"))
    for i in (0, 1)
]
OK = "ok"


@pytest.mark.parametrize(
    ("pod", "nodes", "objs", "want_pre", "want_filter"),
    [
        pytest.param(vb_pod(), [vb_node("node-a")], [], (Code.SKIP, ""), {}, id="pod has not pvcs"),
        pytest.param(
            vb_pod("pvc-a"),
            [vb_node("node-a")],
            [vb_pvc("pvc-a", "wait-sc", bound_pv="pv-a"), vb_pv("pv-a", "wait-sc")],
            None,
            {"node-a": OK},
            id="all bound",
        ),
        pytest.param(
            vb_pod("pvc-a"),
            [vb_node("node-a")],
            [],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "pvc-a" not found'),
            {},
            id="PVC does not exist",
        ),
        pytest.param(
            vb_pod("pvc-a", "pvc-b"),
            [vb_node("node-a")],
            [vb_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "pvc-b" not found'),
            {},
            id="Part of PVCs do not exist",
        ),
        pytest.param(
            vb_pod("pvc-a"),
            [vb_node("node-a")],
            [vb_pvc("pvc-a", "immediate-sc")],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, IMMEDIATE),
            {},
            id="immediate claims not bound",
        ),
        pytest.param(
            vb_pod("pvc-a"),
            [vb_node("node-a")],
            [vb_pvc("pvc-a", "wait-sc")],
            None,
            {"node-a": BIND},
            id="unbound claims no matches",
        ),
        pytest.param(
            vb_pod("pvc-a", "pvc-b"),
            [vb_node("node-a", {"foo": "barbar"})],
            [
                vb_pvc("pvc-a", "wait-sc", bound_pv="pv-a"),
                vb_pvc("pvc-b", "wait-sc"),
                vb_pv("pv-a", "wait-sc", affinity={"foo": ["bar"]}),
            ],
            None,
            {"node-a": f"{NODE_CONFLICT}, {BIND}"},
            id="bound and unbound unsatisfied",
        ),
        pytest.param(
            vb_pod("pvc-a"),
            [vb_node("node-a")],
            [vb_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
            None,
            {"node-a": PV_NOT_EXIST},
            id="pv not found",
        ),
        pytest.param(
            vb_pod("pvc-a"),
            [vb_node("node-a")],
            [vb_pvc("pvc-a", "wait-sc", bound_pv="pv-a", phase="Lost")],
            (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',
            ),
            {},
            id="pv not found claim lost",
        ),
        pytest.param(
            vb_pod("pvc-a"),
            [vb_node("node-a"), vb_node("node-b"), vb_node("node-c")],
            [vb_pvc("pvc-a", "wait-sc", storage="50Gi"), *LOCAL_PVS],
            None,
            {"node-a": OK, "node-b": OK, "node-c": BIND},
            id="local volumes with close capacity are preferred",
        ),
        pytest.param(
            vb_pod("pvc-0", "pvc-1"),
            [vb_node("node-a"), vb_node("node-b"), vb_node("node-c")],
            [
                vb_pvc("pvc-0", "wait-sc", storage="50Gi"),
                vb_pvc("pvc-1", "wait-hdd-sc", storage="100Gi"),
                *LOCAL_PVS_HDD,
            ],
            None,
            {"node-a": OK, "node-b": OK, "node-c": BIND},
            id="local volumes with close capacity are preferred (multiple pvcs)",
        ),
        pytest.param(
            vb_pod("pvc-a"),
            ZONAL_NODES,
            [vb_pvc("pvc-a", "wait-sc", storage="50Gi"), *ZONAL_PVS],
            None,
            {
                "zone-a-node-a": OK,
                "zone-a-node-b": OK,
                "zone-b-node-a": OK,
                "zone-b-node-b": OK,
                "zone-c-node-a": BIND,
                "zone-c-node-b": BIND,
            },
            id="zonal volumes with close capacity are preferred",
        ),
    ],
)
def test_volume_binding(
    pod: Pod,
    nodes: list[Node],
    objs: list[Obj],
    want_pre: tuple[Code, str] | None,
    want_filter: dict[str, str],
) -> None:
    snap = snapshot(nodes, [], [*VB_CLASSES, *objs], V134)
    plugin = VolumeBinding(Handle(snap, V134, {}))
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod)
    if want_pre is not None:
        assert (pre.code, pre.message) == want_pre
        return
    assert pre.ok, pre
    got = {}
    for ni in snap.node_infos:
        s = plugin.filter(state, pod, ni)
        if not s.ok:
            assert s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        got[ni.name] = OK if s.ok else s.message
    assert got == want_filter
    # Scoring needs the StorageCapacityScoring gate, off in every supported release.
    assert plugin.pre_score(state, pod, snap.node_infos).code == Code.SKIP


def test_node_conflict_wording_before_v133() -> None:
    d = dialect_for("v1.32.2")
    objs = [*CLASSES, pvBoundImmediateNode2, immediateBoundPVC]
    snap = snapshot([NODE1], [], objs, d)
    plugin = VolumeBinding(Handle(snap, d, {}))
    state = CycleState()
    p = make_pod([immediateBoundPVC])
    assert plugin.pre_filter(state, p)[1].ok
    assert plugin.filter(state, p, snap.node_infos[0]).reasons == (
        "node(s) had volume node affinity conflict",
    )
