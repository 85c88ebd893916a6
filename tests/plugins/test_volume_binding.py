"""VolumeBinding: PreFilter claim checks, bound PV affinity, static binding, provisioning and capacity."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, CycleState, notes_of
from kdiagnose.scheduler.plugins.volumebinding.volume_binding import VolumeBinding
from kdiagnose.versions import Dialect
from tests.plugins.volume_factories import (
    V132,
    V133,
    V134,
    csinode,
    eph_vol,
    make,
    node,
    pod,
    pv,
    pvc,
    pvc_vol,
    run,
    snapshot,
    storage_class,
    verdicts,
)

NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
NODE_CONFLICT_OLD = "node(s) had volume node affinity conflict"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NO_SPACE = "node(s) did not have enough free storage"
PV_MISSING = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ZONE = "topology.kubernetes.io/zone"

NODES = [node("a1", {ZONE: "a"}), node("b1", {ZONE: "b"})]


def filter_all(
    objects: list[dict[str, Any]], volumes: list[dict[str, Any]], dialect: Dialect = V134
) -> dict[str, str]:
    snap = snapshot(NODES, [], objects, dialect)
    _, pre, per_node = run(make(VolumeBinding, snap), pod("p", volumes=volumes))
    assert pre.ok, pre
    assert all(s.ok or s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE for s in per_node.values())
    return verdicts(per_node)


@pytest.mark.parametrize(
    ("volumes", "objects", "reason"),
    [
        pytest.param([pvc_vol("c")], [], 'persistentvolumeclaim "c" not found', id="missing claim"),
        pytest.param(
            [pvc_vol("c")],
            [pvc("c", volume="pv-x", bound=True, phase="Lost")],
            'persistentvolumeclaim "c" bound to non-existent persistentvolume "pv-x"',
            id="claim in phase Lost",
        ),
        pytest.param(
            [pvc_vol("c")],
            [pvc("c", deleting=True)],
            'persistentvolumeclaim "c" is being deleted',
            id="claim being deleted",
        ),
        pytest.param(
            [eph_vol("scratch")],
            [],
            'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"',
            id="ephemeral claim not created yet",
        ),
        pytest.param(
            [eph_vol("scratch")],
            [pvc("p-scratch", owner_uid="someone-else")],
            "PVC default/p-scratch was not created for pod default/p (pod is not owner)",
            id="ephemeral claim owned by another object",
        ),
        pytest.param(
            [pvc_vol("c")],
            [pvc("c"), storage_class(mode="Immediate")],
            "pod has unbound immediate PersistentVolumeClaims",
            id="unbound Immediate claim",
        ),
        pytest.param(
            [pvc_vol("c")],
            [pvc("c", sc="missing"), storage_class()],
            "pod has unbound immediate PersistentVolumeClaims",
            id="unbound claim of a missing class counts as Immediate",
        ),
        pytest.param(
            [pvc_vol("c")],
            [pvc("c", volume="pv-1"), pv("pv-1"), storage_class()],
            "pod has unbound immediate PersistentVolumeClaims",
            id="claim with volumeName but no bind-completed annotation",
        ),
    ],
)
def test_pre_filter_rejections(
    volumes: list[dict[str, Any]], objects: list[dict[str, Any]], reason: str
) -> None:
    snap = snapshot(NODES, [], objects)
    _, pre, _ = run(make(VolumeBinding, snap), pod("p", volumes=volumes))
    assert pre.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert pre.reasons == (reason,)


def test_pre_filter_skips_pods_without_claims_and_pre_score_always_skips() -> None:
    snap = snapshot(NODES, [], [])
    pl = make(VolumeBinding, snap)
    _, pre, _ = run(pl, pod("p", volumes=[{"name": "e", "emptyDir": {}}]))
    assert pre.code == Code.SKIP
    assert pl.pre_score(CycleState(), pod("p"), snap.node_infos).code == Code.SKIP


@pytest.mark.parametrize(
    ("dialect", "reason"),
    [
        pytest.param(V134, NODE_CONFLICT, id="v1.34 wording"),
        pytest.param(V133, NODE_CONFLICT, id="v1.33 wording"),
        pytest.param(V132, NODE_CONFLICT_OLD, id="v1.32 wording"),
    ],
)
def test_bound_pv_node_affinity(dialect: Dialect, reason: str) -> None:
    objs = [
        pvc("c", volume="pv-1", bound=True),
        pv("pv-1", zone_in=["a"], phase="Bound", claim="c"),
        storage_class(),
    ]
    assert filter_all(objs, [pvc_vol("c")], dialect) == {"a1": "ok", "b1": reason}


def test_bound_claim_with_missing_pv_is_reported_per_node() -> None:
    objs = [pvc("c", volume="pv-gone", bound=True), storage_class(), pv("other")]
    assert filter_all(objs, [pvc_vol("c")]) == {"a1": PV_MISSING, "b1": PV_MISSING}


def test_migrated_in_tree_pv_uses_the_csi_topology_key() -> None:
    source = {"awsElasticBlockStore": {"volumeID": "aws://a/vol-1"}}
    objs = [
        pvc("c", volume="pv-1", bound=True),
        pv("pv-1", zone_in=["a"], phase="Bound", claim="c", source=source),
        csinode("a1", {}, migrated="kubernetes.io/aws-ebs"),
    ]
    # a1 migrated EBS: the requirement moves to topology.ebs.csi.aws.com/zone, which a1 lacks.
    assert filter_all(objs, [pvc_vol("c")]) == {"a1": NODE_CONFLICT, "b1": NODE_CONFLICT}


@pytest.mark.parametrize(
    ("pvs", "claim", "expect"),
    [
        pytest.param(
            [pv("pv-a", zone_in=["a"])], {}, {"a1": "ok", "b1": BIND_CONFLICT}, id="local PV only on its node"
        ),
        pytest.param(
            [pv("pv-a", storage="5Gi")], {}, {"a1": BIND_CONFLICT, "b1": BIND_CONFLICT}, id="too small"
        ),
        pytest.param(
            [pv("pv-a", phase="Released")], {}, {"a1": BIND_CONFLICT, "b1": BIND_CONFLICT}, id="not Available"
        ),
        pytest.param(
            [pv("pv-a", sc="other")], {}, {"a1": BIND_CONFLICT, "b1": BIND_CONFLICT}, id="other class"
        ),
        pytest.param(
            [pv("pv-a", modes=["ReadOnlyMany"])],
            {},
            {"a1": BIND_CONFLICT, "b1": BIND_CONFLICT},
            id="access modes differ",
        ),
        pytest.param(
            [pv("pv-a", claim="someone")],
            {},
            {"a1": BIND_CONFLICT, "b1": BIND_CONFLICT},
            id="reserved for another claim",
        ),
        pytest.param(
            [pv("pv-a", labels={"tier": "slow"})],
            {"selector": {"matchLabels": {"tier": "fast"}}},
            {"a1": BIND_CONFLICT, "b1": BIND_CONFLICT},
            id="claim selector does not match",
        ),
        pytest.param(
            [pv("pv-a", claim="c", zone_in=["b"], phase="Bound")],
            {},
            {"a1": BIND_CONFLICT, "b1": "ok"},
            id="pre-bound PV is used only where its affinity allows",
        ),
    ],
)
def test_static_binding(pvs: list[dict[str, Any]], claim: dict[str, Any], expect: dict[str, str]) -> None:
    sc = storage_class(provisioner="kubernetes.io/no-provisioner")
    assert filter_all([pvc("c", **claim), sc, *pvs], [pvc_vol("c")]) == expect


def test_one_pv_is_not_used_for_two_claims_of_the_pod() -> None:
    sc = storage_class(provisioner="kubernetes.io/no-provisioner")
    objs = [pvc("c1"), pvc("c2"), sc, pv("pv-a")]
    assert filter_all(objs, [pvc_vol("c1", "d1"), pvc_vol("c2", "d2")]) == {
        "a1": BIND_CONFLICT,
        "b1": BIND_CONFLICT,
    }
    objs.append(pv("pv-b"))
    assert filter_all(objs, [pvc_vol("c1", "d1"), pvc_vol("c2", "d2")]) == {"a1": "ok", "b1": "ok"}


def test_smallest_fitting_pv_is_chosen_first() -> None:
    # c1 (5Gi) sorts first and takes the smallest fit (pv-small), leaving pv-big for c2 (50Gi).
    sc = storage_class(provisioner="kubernetes.io/no-provisioner")
    objs = [
        pvc("c2", storage="50Gi"),
        pvc("c1", storage="5Gi"),
        sc,
        pv("pv-big", storage="60Gi"),
        pv("pv-small", storage="6Gi"),
    ]
    assert filter_all(objs, [pvc_vol("c2", "d2"), pvc_vol("c1", "d1")]) == {"a1": "ok", "b1": "ok"}


def test_allowed_topologies_limit_dynamic_provisioning() -> None:
    objs = [pvc("c"), storage_class(zones=["a"]), pv("unrelated", sc="x")]
    assert filter_all(objs, [pvc_vol("c")]) == {"a1": "ok", "b1": BIND_CONFLICT}


def test_selected_node_annotation_pins_the_claim() -> None:
    objs = [pvc("c", annotations={"volume.kubernetes.io/selected-node": "a1"}), storage_class()]
    assert filter_all(objs, [pvc_vol("c")]) == {"a1": "ok", "b1": BIND_CONFLICT}


def capacity(name: str, cap: str | None, zone: str, max_size: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": "sc",
        "nodeTopology": {"matchLabels": {ZONE: zone}},
    }
    if cap is not None:
        c["capacity"] = cap
    if max_size is not None:
        c["maximumVolumeSize"] = max_size
    return c


def driver(storage_capacity: bool) -> dict[str, Any]:
    return {
        "kind": "CSIDriver",
        "metadata": {"name": "csi.example.com"},
        "spec": {"storageCapacity": storage_capacity},
    }


@pytest.mark.parametrize(
    ("objects", "expect"),
    [
        pytest.param(
            [driver(True), capacity("ca", "100Gi", "a"), capacity("cb", "5Gi", "b")],
            {"a1": "ok", "b1": NO_SPACE},
            id="capacity per node decides",
        ),
        pytest.param(
            [driver(True), capacity("ca", "100Gi", "a")],
            {"a1": "ok", "b1": NO_SPACE},
            id="no capacity object",
        ),
        pytest.param(
            [driver(True), capacity("ca", "100Gi", "a", max_size="5Gi")],
            {"a1": NO_SPACE, "b1": NO_SPACE},
            id="maximumVolumeSize takes precedence",
        ),
        pytest.param(
            [driver(False)], {"a1": "ok", "b1": "ok"}, id="driver without storageCapacity is not checked"
        ),
        pytest.param([], {"a1": "ok", "b1": "ok"}, id="no CSIDriver object is not checked"),
    ],
)
def test_storage_capacity(objects: list[dict[str, Any]], expect: dict[str, str]) -> None:
    assert filter_all([pvc("c", storage="10Gi"), storage_class(), *objects], [pvc_vol("c")]) == expect


def test_missing_inputs_are_noted() -> None:
    snap = snapshot(NODES, [], [pvc("c")])
    state, pre, _ = run(make(VolumeBinding, snap), pod("p", volumes=[pvc_vol("c")]))
    assert pre.reasons == ("pod has unbound immediate PersistentVolumeClaims",)
    assert "not checked: the input has no StorageClasses" in notes_of(state)
    snap = snapshot(NODES, [], [pvc("c"), storage_class()])
    state, pre, _ = run(make(VolumeBinding, snap), pod("p", volumes=[pvc_vol("c")]))
    assert pre.ok
    notes = notes_of(state)
    assert "not checked: the input has no PersistentVolumes (static binding of unbound claims)" in notes
    assert "not checked: the input has no CSIDrivers (storage capacity of unbound claims)" in notes


def test_a_claim_without_a_class_and_no_storage_classes_is_noted() -> None:
    # The claim template of a manifest often names no class: admission gives it the default StorageClass,
    # which a snapshot without StorageClasses cannot tell.
    state, pre, _ = run(
        make(VolumeBinding, snapshot(NODES, [], [pvc("c", sc=None)])), pod("p", volumes=[pvc_vol("c")])
    )
    assert pre.reasons == ("pod has unbound immediate PersistentVolumeClaims",)
    assert any(
        n.startswith("not checked: the input has no StorageClasses (claims without") for n in notes_of(state)
    )
    objs = [pvc("c", sc=None), storage_class()]
    state, _, _ = run(make(VolumeBinding, snapshot(NODES, [], objs)), pod("p", volumes=[pvc_vol("c")]))
    assert not any("no StorageClasses" in n for n in notes_of(state))


NO_CAPACITIES = "not checked: the input has no CSIStorageCapacities"


@pytest.mark.parametrize(
    ("objects", "noted"),
    [
        pytest.param([driver(True)], True, id="capacity-tracking driver, no CSIStorageCapacity at all"),
        pytest.param([driver(True), capacity("ca", "100Gi", "a")], False, id="capacities in the input"),
        pytest.param([driver(False)], False, id="driver without storageCapacity"),
    ],
)
def test_missing_storage_capacities_are_noted(objects: list[dict[str, Any]], noted: bool) -> None:
    # Without any CSIStorageCapacity every node fails "did not have enough free storage": a dump that left
    # the kind out must say so rather than pass it off as the cluster's state.
    snap = snapshot(NODES, [], [pvc("c", storage="10Gi"), storage_class(), *objects])
    state, pre, _ = run(make(VolumeBinding, snap), pod("p", volumes=[pvc_vol("c")]))
    assert pre.ok
    assert any(n.startswith(NO_CAPACITIES) for n in notes_of(state)) is noted


def test_generic_ephemeral_claim_owned_by_the_pod_is_provisioned() -> None:
    objs = [pvc("p-scratch", owner_uid="uid-p"), storage_class(zones=["b"])]
    assert filter_all(objs, [eph_vol("scratch")]) == {"a1": BIND_CONFLICT, "b1": "ok"}
