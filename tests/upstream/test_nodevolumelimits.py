"""Port of upstream nodevolumelimits/csi_test.go TestCSILimits (v1.34).

The fixtures mirror the Go helpers: getFakeCSIPVLister / getFakeCSIPVCLister (4 PVs and claims per driver,
`csi-<driver>-<i>`, plus `csi-4` unbound with a class, `csi-5` without one, `csi-6` bound to a missing PV),
getFakeCSIStorageClassLister (class `csi-sc` provisioned by the first driver), getFakeVolumeAttachmentLister
and getNodeWithPodAndVolumeLimits (node `node-for-max-pd-test-1`, CSINode limits per limitSource, the
aws-ebs plugin listed as migrated). Skipped: the QueueingHint tests (TestCSILimitsQHint,
TestCSILimitsAddedPVCQHint, TestCSILimitsDeletedVolumeAttachmentQHint, TestCSILimitsAfterCSINodeUpdatedQHint)
test Go-only requeueing mechanics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.scheduler.framework import Code, CycleState, Handle
from kdiagnose.scheduler.plugins.nodevolumelimits.csi import CSILimits
from tests.plugins.volume_factories import V134, snapshot

Obj = dict[str, Any]

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
NODE = "node-for-max-pd-test-1"
SC = "csi-sc"
EXCEED = "node(s) exceed max volume count"


def _pod(name: str, volumes: list[Obj], *, ns: str = "default", uid: str = "") -> Obj:
    meta: Obj = {"name": name, "namespace": ns, "uid": uid or name}
    return {"metadata": meta, "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": volumes}}


def _pvc_pod(name: str, *claims: str) -> Obj:
    # st.MakePod().PVC(name): a volume named after the claim.
    return _pod(name, [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims])


def _ebs_inline(name: str, volume_id: str) -> Obj:
    return _pod(name, [{"name": "v", "awsElasticBlockStore": {"volumeID": volume_id}}])


RUNNING = _pvc_pod("running", f"csi-{EBS}-3")
PENDING_VOLUME = _pvc_pod("pending", "csi-4")
UNBOUND_PVC_POD2 = _pvc_pod("pending2", "csi-4")
MISSING_PV = _pvc_pod("missing-pv", "csi-6")
NO_SC_PVC = _pvc_pod("no-sc", "csi-5")
GCE_TWO_VOL = _pvc_pod("gce-two", f"csi-{GCE}-1", f"csi-{GCE}-2")
IN_TREE_ONE_VOL = _pvc_pod("in-tree-one", f"csi-{EBS_IN_TREE}-0")
IN_TREE_TWO_VOL = _pvc_pod("in-tree-two", f"csi-{EBS_IN_TREE}-1", f"csi-{EBS_IN_TREE}-2")
CSI_EBS_ONE_VOL = _pvc_pod("ebs-one", f"csi-{EBS}-0")
CSI_EBS_TWO_VOL = _pvc_pod("ebs-two", f"csi-{EBS}-1", f"csi-{EBS}-2")
IN_TREE_NON_MIGRATABLE = _pvc_pod("hostpath-one", f"csi-{HOSTPATH_IN_TREE}-0")
EPHEMERAL = _pod(
    "abc", [{"name": "xyz", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}], ns="test", uid="12345"
)
EPHEMERAL_TWO = _pod(
    "abc",
    [
        {"name": "x", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        {"name": "y", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
    ],
    ns="test",
    uid="12345II",
)
IN_TREE_INLINE = _ebs_inline("inline", "aws-inline1")
IN_TREE_INLINE_SAME_ID = _ebs_inline("inline-same", f"csi-{EBS}-1")
_CM_SECRET: list[Obj] = [
    {"name": "cm", "configMap": {"name": "x"}},
    {"name": "s", "secret": {"secretName": "x"}},
]
ONLY_CM_SECRET = _pod("cm-secret", list(_CM_SECRET))
PVC_WITH_CM_SECRET = _pod(
    "pvc-cm", [*_CM_SECRET, {"name": "p", "persistentVolumeClaim": {"claimName": f"csi-{EBS}-0"}}]
)
EPHEMERAL_WITH_CM_SECRET = _pod(
    "abc", [*_CM_SECRET, {"name": "xyz", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}], ns="test"
)
INLINE_WITH_CM_SECRET = _pod(
    "inline-cm", [*_CM_SECRET, {"name": "e", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}]
)


def _eph_claim(pod: Obj, volume: str, owned: bool = True) -> Obj:
    m = pod["metadata"]
    meta: Obj = {"name": f"{m['name']}-{volume}", "namespace": m["namespace"]}
    if owned:
        meta["ownerReferences"] = [{"kind": "Pod", "name": m["name"], "uid": m["uid"], "controller": True}]
    return {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": {"storageClassName": SC}}


EPHEMERAL_CLAIM = _eph_claim(EPHEMERAL, "xyz")
CONFLICTING_CLAIM = _eph_claim(EPHEMERAL, "xyz", owned=False)
EPHEMERAL_CLAIM_X = _eph_claim(EPHEMERAL_TWO, "x")
EPHEMERAL_CLAIM_Y = _eph_claim(EPHEMERAL_TWO, "y")


def _fixtures(
    drivers: list[str], va_count: int, limit_source: str, max_vols: int, migrated: str = EBS_IN_TREE
) -> list[Obj]:
    objs: list[Obj] = []
    for d in drivers:
        for j in range(4):
            handle = f"csi-{d}-{j}"
            if d == EBS_IN_TREE:
                source: Obj = {"awsElasticBlockStore": {"volumeID": handle}}
            elif d == HOSTPATH_IN_TREE:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": d, "volumeHandle": handle}}
            objs.append({"kind": "PersistentVolume", "metadata": {"name": handle}, "spec": source})
            objs.append(
                {
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": handle, "namespace": "default"},
                    "spec": {"volumeName": handle},
                }
            )
        for j in range(va_count):
            objs.append(
                {
                    "kind": "VolumeAttachment",
                    "metadata": {"name": f"va-{d}-{j}"},
                    "spec": {
                        "nodeName": NODE,
                        "attacher": d,
                        "source": {"persistentVolumeName": f"csi-{d}-{j}"},
                    },
                }
            )
    objs += [
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "csi-4", "namespace": "default"},
            "spec": {"storageClassName": SC},
        },
        {"kind": "PersistentVolumeClaim", "metadata": {"name": "csi-5", "namespace": "default"}, "spec": {}},
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "csi-6", "namespace": "default"},
            "spec": {"storageClassName": SC, "volumeName": "missing-in-action"},
        },
        {"kind": "StorageClass", "metadata": {"name": SC}, "provisioner": drivers[0]},
    ]
    if limit_source in ("csinode", "csinode-with-no-limit", "no-csi-driver"):
        csi_drivers: list[Obj] = []
        if limit_source != "no-csi-driver":
            for d in drivers:
                entry: Obj = {"name": d, "nodeID": NODE}
                if limit_source == "csinode":
                    entry["allocatable"] = {"count": max_vols}
                csi_drivers.append(entry)
        objs.append(
            {
                "kind": "CSINode",
                "metadata": {
                    "name": NODE,
                    "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": migrated},
                },
                "spec": {"drivers": csi_drivers},
            }
        )
    return objs


@dataclass
class Case:
    new_pod: Obj
    drivers: list[str]
    existing: list[Obj] = field(default_factory=list)
    extra_claims: list[Obj] = field(default_factory=list)
    max_vols: int = 0
    va_count: int = 0
    limit_source: str = ""
    want: tuple[Code, str] | None = None
    want_skip: bool = False
    migrated: str = EBS_IN_TREE


EXCEEDED = (Code.UNSCHEDULABLE, EXCEED)
CASES = [
    pytest.param(
        Case(CSI_EBS_ONE_VOL, [EBS], max_vols=2, va_count=2, limit_source="csinode", want=EXCEEDED),
        id="should count VolumeAttachments towards volume limit when no pods exist",
    ),
    pytest.param(
        Case(CSI_EBS_ONE_VOL, [EBS], max_vols=2, va_count=1, limit_source="csinode"),
        id="should schedule pod when VolumeAttachments count does not exceed limit",
    ),
    pytest.param(
        Case(CSI_EBS_ONE_VOL, [EBS], [RUNNING, CSI_EBS_TWO_VOL], max_vols=4, limit_source="csinode"),
        id="fits when node volume limit >= new pods CSI volume",
    ),
    pytest.param(
        Case(
            CSI_EBS_ONE_VOL,
            [EBS],
            [RUNNING, CSI_EBS_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="doesn't when node volume limit <= pods CSI volume",
    ),
    pytest.param(
        Case(
            CSI_EBS_ONE_VOL,
            [EBS],
            [RUNNING, CSI_EBS_TWO_VOL],
            max_vols=2,
            limit_source="csinode-with-no-limit",
        ),
        id="should when driver does not support volume limits",
    ),
    pytest.param(
        Case(
            CSI_EBS_ONE_VOL,
            [EBS],
            [PENDING_VOLUME, CSI_EBS_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="count pending PVCs towards volume limit <= pods CSI volume",
    ),
    pytest.param(
        Case(
            CSI_EBS_ONE_VOL,
            [EBS],
            [PENDING_VOLUME, UNBOUND_PVC_POD2, CSI_EBS_TWO_VOL],
            max_vols=4,
            limit_source="csinode",
        ),
        id="count multiple pending pvcs towards volume limit >= pods CSI volume",
    ),
    pytest.param(
        Case(
            CSI_EBS_ONE_VOL,
            [EBS],
            [MISSING_PV, CSI_EBS_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="should count PVCs with invalid PV name but valid SC",
    ),
    pytest.param(
        Case(CSI_EBS_ONE_VOL, [EBS], [RUNNING, NO_SC_PVC], max_vols=2, limit_source="csinode"),
        id="don't count pvcs with missing SC towards volume limit",
    ),
    pytest.param(
        Case(
            CSI_EBS_ONE_VOL,
            [EBS, GCE],
            [GCE_TWO_VOL, CSI_EBS_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="count pvcs with the same type towards volume limit",
    ),
    pytest.param(
        Case(GCE_TWO_VOL, [EBS, GCE], [CSI_EBS_TWO_VOL, RUNNING], max_vols=2, limit_source="csinode"),
        id="don't count pvcs with different type towards volume limit",
    ),
    pytest.param(
        Case(
            IN_TREE_ONE_VOL,
            [EBS_IN_TREE, EBS],
            [IN_TREE_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="should count in-tree volumes if migration is enabled",
    ),
    pytest.param(Case(IN_TREE_INLINE, [EBS_IN_TREE, EBS], [IN_TREE_TWO_VOL]), id="nil csi node"),
    pytest.param(
        Case(
            PENDING_VOLUME,
            [EBS_IN_TREE, EBS],
            [IN_TREE_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="should count unbound in-tree volumes if migration is enabled",
    ),
    pytest.param(
        Case(
            IN_TREE_ONE_VOL,
            [EBS_IN_TREE, EBS],
            [IN_TREE_TWO_VOL],
            max_vols=2,
            limit_source="csinode-with-no-limit",
        ),
        id="should not limit pod if volume used does not report limits",
    ),
    pytest.param(
        Case(
            IN_TREE_NON_MIGRATABLE,
            [HOSTPATH_IN_TREE, EBS],
            [CSI_EBS_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
        ),
        id="should not count non-migratable in-tree volumes",
    ),
    pytest.param(
        Case(
            IN_TREE_INLINE,
            [EBS_IN_TREE, EBS],
            [IN_TREE_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="should count in-tree inline volumes if migration is enabled",
    ),
    pytest.param(
        Case(
            IN_TREE_ONE_VOL,
            [EBS_IN_TREE, EBS],
            [CSI_EBS_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
    ),
    pytest.param(
        Case(
            IN_TREE_INLINE,
            [EBS_IN_TREE, EBS],
            [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL],
            max_vols=3,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
    ),
    pytest.param(
        Case(
            IN_TREE_INLINE_SAME_ID,
            [EBS_IN_TREE, EBS],
            [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL],
            max_vols=3,
            limit_source="csinode",
        ),
        id="should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes) same handle",
    ),
    pytest.param(
        Case(
            CSI_EBS_ONE_VOL,
            [EBS_IN_TREE, EBS],
            [IN_TREE_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
    ),
    # The fake lister in the Go test says `persistentvolumeclaims`; the real (generated) lister's NotFound
    # names the singular resource, as the golden corpus shows.
    pytest.param(
        Case(
            EPHEMERAL,
            [EBS],
            limit_source="csinode-with-no-limit",
            want=(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',
            ),
        ),
        id="ephemeral volume missing",
    ),
    pytest.param(
        Case(
            EPHEMERAL,
            [EBS],
            extra_claims=[CONFLICTING_CLAIM],
            limit_source="csinode-with-no-limit",
            want=(Code.ERROR, "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"),
        ),
        id="ephemeral volume not owned",
    ),
    pytest.param(
        Case(EPHEMERAL, [EBS], extra_claims=[EPHEMERAL_CLAIM], limit_source="csinode-with-no-limit"),
        id="ephemeral volume unbound",
    ),
    pytest.param(
        Case(
            EPHEMERAL,
            [EBS],
            [RUNNING, CSI_EBS_TWO_VOL],
            extra_claims=[EPHEMERAL_CLAIM],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="ephemeral doesn't when node volume limit <= pods CSI volume",
    ),
    pytest.param(
        Case(
            CSI_EBS_ONE_VOL,
            [EBS],
            [RUNNING, EPHEMERAL_TWO],
            extra_claims=[EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
    ),
    pytest.param(
        Case(
            CSI_EBS_ONE_VOL,
            [EBS],
            [RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL],
            extra_claims=[EPHEMERAL_CLAIM],
            max_vols=3,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
    ),
    pytest.param(
        Case(
            CSI_EBS_ONE_VOL,
            [EBS],
            [RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL],
            extra_claims=[EPHEMERAL_CLAIM],
            max_vols=5,
            limit_source="csinode",
        ),
        id="persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
    ),
    pytest.param(
        Case(ONLY_CM_SECRET, [EBS], max_vols=2, limit_source="csinode", want_skip=True),
        id="skip Filter when the pod only uses secrets and configmaps",
    ),
    pytest.param(
        Case(PVC_WITH_CM_SECRET, [EBS], max_vols=2, limit_source="csinode"),
        id="don't skip Filter when the pod has pvcs",
    ),
    pytest.param(
        Case(
            EPHEMERAL_WITH_CM_SECRET,
            [EBS],
            limit_source="csinode-with-no-limit",
            want=(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',
            ),
        ),
        id="don't skip Filter when the pod has ephemeral volumes",
    ),
    pytest.param(
        Case(
            INLINE_WITH_CM_SECRET,
            [EBS_IN_TREE, EBS],
            [IN_TREE_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
        ),
        id="don't skip Filter when the pod has inline migratable volumes",
    ),
    # Not in the Go table: utils.go isCSIMigrationOn returns true for aws-ebs, gce-pd, azure-disk and cinder
    # whenever the node has a CSINode; only Portworx consults the migrated-plugins annotation.
    pytest.param(
        Case(
            IN_TREE_ONE_VOL,
            [EBS_IN_TREE, EBS],
            [IN_TREE_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
            migrated="",
        ),
        id="in-tree EBS volumes count without the migrated-plugins annotation",
    ),
    pytest.param(
        Case(
            IN_TREE_INLINE,
            [EBS_IN_TREE, EBS],
            [IN_TREE_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
            migrated="",
        ),
        id="inline EBS volumes count without the migrated-plugins annotation",
    ),
    pytest.param(
        Case(
            PENDING_VOLUME,
            [EBS_IN_TREE, EBS],
            [IN_TREE_TWO_VOL],
            max_vols=2,
            limit_source="csinode",
            want=EXCEEDED,
            migrated="",
        ),
        id="unbound claims of the in-tree EBS provisioner count without the annotation",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_csi_limits(case: Case) -> None:
    objs = _fixtures(case.drivers, case.va_count, case.limit_source, case.max_vols, case.migrated)
    objs += case.extra_claims
    existing = []
    for raw in case.existing:
        p = {"metadata": dict(raw["metadata"]), "spec": {**raw["spec"], "nodeName": NODE}}
        existing.append(Pod(p))
    node = Node({"metadata": {"name": NODE}, "status": {"allocatable": {}}})
    snap = snapshot([node], existing, objs, V134)
    plugin = CSILimits(Handle(snap, V134, {}))
    new_pod = Pod(case.new_pod)
    state = CycleState()
    _, pre = plugin.pre_filter(state, new_pod)
    if case.want_skip:
        assert pre.code == Code.SKIP
        return
    assert pre.ok
    got = plugin.filter(state, new_pod, snap.node_infos[0])
    if case.want is None:
        assert got.ok, got
    else:
        assert (got.code, got.message) == case.want
