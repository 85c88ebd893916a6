"""Port of upstream volumezone/volume_zone_test.go (v1.34): TestSingleZone, TestMultiZone, TestWithBinding.

Each case runs PreFilter then Filter against a single node, as upstream. Differences kept on purpose:
the Go listers are fakes whose NotFound errors say `storageclasses.storage.k8s.io`; the real lister's say
`storageclass.storage.k8s.io`. A StorageClass without volumeBindingMode cannot exist in a real cluster (the
API server defaults it to Immediate), so upstream's `VolumeBindingMode not set` case reads as Immediate.
Skipped: the isSchedulableAfter* QueueingHint tests and the benchmark (Go-only mechanics).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import Code, CycleState, Handle
from kdiagnose.scheduler.plugins.volumezone.volume_zone import VolumeZone
from tests.plugins.volume_factories import V134, snapshot

Obj = dict[str, Any]
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
CONFLICT = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had no available volume zone")
SKIP = (Code.SKIP, "")


def _pv(name: str, labels: dict[str, str]) -> Obj:
    return {"kind": "PersistentVolume", "metadata": {"name": name, "labels": labels}, "spec": {}}


def _pvc(name: str, volume: str = "", cls: str | None = None) -> Obj:
    spec: Obj = {}
    if volume:
        spec["volumeName"] = volume
    if cls is not None:
        spec["storageClassName"] = cls
    return {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


SINGLE = [
    _pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    _pv("Vol_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}),
    _pv("Vol_3", {BETA_REGION: "us-west1"}),
    _pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    _pv("Vol_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}),
    _pv("Vol_Stable_3", {ZONE: "us-west1-a", REGION: "us-west1-a"}),
    _pvc("PVC_1", "Vol_1"),
    _pvc("PVC_2", "Vol_2"),
    _pvc("PVC_3", "Vol_3"),
    _pvc("PVC_4", "Vol_not_exist"),
    _pvc("PVC_Stable_1", "Vol_Stable_1"),
    _pvc("PVC_Stable_2", "Vol_Stable_2"),
    _pvc("PVC_Stable_3", "Vol_Stable_3"),
]
MULTI = [
    _pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    _pv("Vol_2", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    _pv("Vol_3", {BETA_ZONE: "us-west1-c__us-west1-a"}),
    _pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    _pv("Vol_Stable_2", {ZONE: "us-west1-c__us-west1-a"}),
    _pvc("PVC_1", "Vol_1"),
    _pvc("PVC_2", "Vol_2"),
    _pvc("PVC_3", "Vol_3"),
    _pvc("PVC_4", "Vol_not_exist"),
    _pvc("PVC_Stable_1", "Vol_Stable_1"),
    _pvc("PVC_Stable_2", "Vol_Stable_2"),
]
BINDING = [
    {"kind": "StorageClass", "metadata": {"name": "Class_Immediate"}},
    {"kind": "StorageClass", "metadata": {"name": "Class_Wait"}, "volumeBindingMode": "WaitForFirstConsumer"},
    _pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    _pvc("PVC_1", "Vol_1"),
    _pvc("PVC_NoSC", cls="Class_0"),
    _pvc("PVC_EmptySC"),
    _pvc("PVC_WaitSC", cls="Class_Wait"),
    _pvc("PVC_ImmediateSC", cls="Class_Immediate"),
]
BINDING_NODE = {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}


def _case(objs: list[Obj], claim: str | None, labels: dict[str, str], pre: Any, filt: Any, id: str) -> Any:
    return pytest.param(objs, claim, labels, pre, filt, id=id)


CASES = [
    _case(SINGLE, None, {BETA_ZONE: "us-west1-a"}, SKIP, None, "TestSingleZone/pod without volume"),
    _case(SINGLE, "PVC_1", {}, None, None, "TestSingleZone/node without labels"),
    _case(
        SINGLE,
        "PVC_1",
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        None,
        None,
        "TestSingleZone/beta zone label matched",
    ),
    _case(
        SINGLE,
        "PVC_2",
        {BETA_REGION: "us-west1", "uselessLabel": "none"},
        None,
        None,
        "TestSingleZone/beta region label matched",
    ),
    _case(
        SINGLE,
        "PVC_2",
        {BETA_REGION: "no_us-west1", "uselessLabel": "none"},
        None,
        CONFLICT,
        "TestSingleZone/beta region label doesn't match",
    ),
    _case(
        SINGLE,
        "PVC_1",
        {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"},
        None,
        CONFLICT,
        "TestSingleZone/beta zone label doesn't match",
    ),
    _case(
        SINGLE,
        "PVC_Stable_1",
        {ZONE: "us-west1-a", "uselessLabel": "none"},
        None,
        None,
        "TestSingleZone/zone label matched",
    ),
    _case(
        SINGLE,
        "PVC_Stable_2",
        {REGION: "us-west1", "uselessLabel": "none"},
        None,
        None,
        "TestSingleZone/region label matched",
    ),
    _case(
        SINGLE,
        "PVC_Stable_2",
        {REGION: "no_us-west1", "uselessLabel": "none"},
        None,
        CONFLICT,
        "TestSingleZone/region label doesn't match",
    ),
    _case(
        SINGLE,
        "PVC_Stable_1",
        {ZONE: "no_us-west1-a", "uselessLabel": "none"},
        None,
        CONFLICT,
        "TestSingleZone/zone label doesn't match",
    ),
    _case(
        SINGLE,
        "PVC_Stable_3",
        {ZONE: "us-west1-a"},
        None,
        CONFLICT,
        "TestSingleZone/pv with zone and region, node with only zone",
    ),
    _case(
        SINGLE,
        "PVC_Stable_1",
        {BETA_ZONE: "us-west1-a"},
        None,
        CONFLICT,
        "TestSingleZone/pv with zone,node with beta zone",
    ),
    _case(
        SINGLE,
        "PVC_1",
        {ZONE: "us-west1-a"},
        None,
        None,
        "TestSingleZone/pv with beta label,node with ga label, matched",
    ),
    _case(
        SINGLE,
        "PVC_1",
        {ZONE: "us-west1-b"},
        None,
        CONFLICT,
        "TestSingleZone/pv with beta label,node with ga label, don't match",
    ),
    _case(MULTI, "PVC_3", {}, None, None, "TestMultiZone/node without labels"),
    _case(
        MULTI,
        "PVC_3",
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        None,
        None,
        "TestMultiZone/beta zone label matched",
    ),
    _case(
        MULTI,
        "PVC_1",
        {BETA_ZONE: "us-west1-b", "uselessLabel": "none"},
        None,
        CONFLICT,
        "TestMultiZone/beta zone label doesn't match",
    ),
    _case(
        MULTI,
        "PVC_Stable_2",
        {ZONE: "us-west1-a", "uselessLabel": "none"},
        None,
        None,
        "TestMultiZone/zone label matched",
    ),
    _case(
        MULTI,
        "PVC_Stable_1",
        {ZONE: "us-west1-b", "uselessLabel": "none"},
        None,
        CONFLICT,
        "TestMultiZone/zone label doesn't match",
    ),
    _case(BINDING, "PVC_1", BINDING_NODE, None, None, "TestWithBinding/label zone failure domain matched"),
    _case(
        BINDING,
        "PVC_EmptySC",
        BINDING_NODE,
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no pv name and storageClass name"),
        None,
        "TestWithBinding/unbound volume empty storage class",
    ),
    _case(
        BINDING,
        "PVC_NoSC",
        BINDING_NODE,
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'storageclass.storage.k8s.io "Class_0" not found'),
        None,
        "TestWithBinding/unbound volume no storage class",
    ),
    _case(
        BINDING,
        "PVC_ImmediateSC",
        BINDING_NODE,
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name"),
        None,
        "TestWithBinding/unbound volume immediate binding mode",
    ),
    _case(
        BINDING, "PVC_WaitSC", BINDING_NODE, SKIP, None, "TestWithBinding/unbound volume wait binding mode"
    ),
    # Not in the Go tables; from volume_zone.go: a claim bound to a missing PV, and an unparsable zone
    # label (an empty element) that LabelZonesToSet rejects, so the label is ignored.
    _case(
        SINGLE,
        "PVC_4",
        {ZONE: "us-west1-a"},
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolume "Vol_not_exist" not found'),
        None,
        "claim bound to a missing PV",
    ),
    _case(
        [_pv("Vol_bad", {ZONE: "us-west1-a__"}), _pvc("PVC_bad", "Vol_bad")],
        "PVC_bad",
        {ZONE: "us-west1-b"},
        SKIP,
        None,
        "an unparsable zone label is ignored",
    ),
]


@pytest.mark.parametrize(("objs", "claim", "labels", "want_pre", "want_filter"), CASES)
def test_volume_zone(
    objs: list[Obj], claim: str | None, labels: dict[str, str], want_pre: Any, want_filter: Any
) -> None:
    node = Node({"metadata": {"name": "host1", "labels": labels}, "status": {"allocatable": {}}})
    vols = [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}] if claim else []
    pod = Pod(
        {
            "metadata": {"name": "pod_1", "namespace": "default", "uid": "pod_1"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": vols},
        }
    )
    snap = snapshot([node], [], objs, V134)
    plugin = VolumeZone(Handle(snap, V134, {}))
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod)
    assert (pre.code, pre.message) == (want_pre or (Code.SUCCESS, ""))
    if pre.code == Code.SKIP or not pre.ok:
        # The Go test still calls Filter, which without PreFilter state recomputes and gives the same
        # rejection (or success when skipped).
        got = plugin.filter(state, pod, snap.node_infos[0])
        assert (got.code, got.message) == (
            want_pre if not pre.ok and pre.code != Code.SKIP else (Code.SUCCESS, "")
        )
        return
    got = plugin.filter(state, pod, snap.node_infos[0])
    assert (got.code, got.message) == (want_filter or (Code.SUCCESS, ""))
