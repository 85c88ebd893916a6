"""NodeVolumeLimits: per-driver CSI attach limits, unique volumes, in-tree migration, version switches."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, notes_of
from kdiagnose.scheduler.plugins.nodevolumelimits.csi import CSILimits, csi_attach_limit_key
from kdiagnose.versions import Dialect
from tests.plugins.volume_factories import (
    V131,
    V134,
    csinode,
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

EXCEED = "node(s) exceed max volume count"
DRIVER = "csi.example.com"


def bound(name: str) -> list[dict[str, Any]]:
    """A claim `name` bound to PV `pv-<name>` with CSI handle `h-pv-<name>`."""
    return [pvc(name, volume=f"pv-{name}", bound=True), pv(f"pv-{name}", phase="Bound", claim=name)]


@pytest.mark.parametrize(
    ("limit", "existing", "new", "expect"),
    [
        pytest.param(2, ["a"], ["b"], "ok", id="under the limit fits"),
        pytest.param(1, ["a"], ["b"], EXCEED, id="over the limit is rejected"),
        pytest.param(1, ["a"], ["a"], "ok", id="a volume already attached to the node does not count twice"),
        pytest.param(0, [], ["a"], EXCEED, id="a zero limit rejects any volume of the driver"),
        pytest.param(2, ["a", "b"], ["c"], EXCEED, id="existing pods' volumes all count"),
    ],
)
def test_csi_limits(limit: int, existing: list[str], new: list[str], expect: str) -> None:
    objs: list[dict[str, Any]] = [csinode("n1", {DRIVER: limit})]
    for n in sorted(set(existing) | set(new)):
        objs += bound(n)
    pods = [pod(f"old-{n}", volumes=[pvc_vol(n)], node="n1") for n in existing]
    snap = snapshot([node("n1")], pods, objs)
    _, pre, per_node = run(make(CSILimits, snap), pod("new", volumes=[pvc_vol(n, name=n) for n in new]))
    assert pre.ok
    assert verdicts(per_node) == {"n1": expect}
    if expect != "ok":
        assert per_node["n1"].code == Code.UNSCHEDULABLE


def test_unbound_claim_counts_under_the_class_provisioner() -> None:
    objs = [csinode("n1", {DRIVER: 1}), *bound("a"), pvc("fresh"), storage_class(provisioner=DRIVER)]
    snap = snapshot([node("n1")], [pod("old", volumes=[pvc_vol("a")], node="n1")], objs)
    _, _, per_node = run(make(CSILimits, snap), pod("new", volumes=[pvc_vol("fresh")]))
    assert verdicts(per_node) == {"n1": EXCEED}


def test_other_drivers_do_not_count() -> None:
    objs = [csinode("n1", {"other.driver": 1}), *bound("a"), *bound("b")]
    snap = snapshot([node("n1")], [pod("old", volumes=[pvc_vol("a")], node="n1")], objs)
    _, _, per_node = run(make(CSILimits, snap), pod("new", volumes=[pvc_vol("b")]))
    assert verdicts(per_node) == {"n1": "ok"}


@pytest.mark.parametrize(
    ("migrated", "expect"),
    [
        pytest.param(
            "kubernetes.io/aws-ebs", EXCEED, id="migrated EBS inline volumes count under ebs.csi.aws.com"
        ),
        # utils.go isCSIMigrationOn returns true for aws-ebs (also gce-pd, azure-disk, cinder) whenever the
        # node has a CSINode; only Portworx needs the annotation.
        pytest.param("", EXCEED, id="EBS inline volumes count even without the migrated-plugins annotation"),
    ],
)
def test_inline_in_tree_migration(migrated: str, expect: str) -> None:
    def ebs(vol: str) -> dict[str, Any]:
        return {"name": vol, "awsElasticBlockStore": {"volumeID": f"aws://us-east-1a/{vol}"}}

    objs = [csinode("n1", {"ebs.csi.aws.com": 1}, migrated=migrated)]
    snap = snapshot([node("n1")], [pod("old", volumes=[ebs("vol-1")], node="n1")], objs)
    _, pre, per_node = run(make(CSILimits, snap), pod("new", volumes=[ebs("vol-2")]))
    assert pre.ok
    assert verdicts(per_node) == {"n1": expect}


def test_skip_without_countable_volumes() -> None:
    snap = snapshot([node("n1")], [], [])
    _, pre, _ = run(make(CSILimits, snap), pod("new", volumes=[{"name": "e", "emptyDir": {}}]))
    assert pre.code == Code.SKIP


def test_missing_claim_is_unresolvable_at_filter_and_missing_csinodes_noted() -> None:
    snap = snapshot([node("n1")], [], [])
    state, pre, per_node = run(make(CSILimits, snap), pod("new", volumes=[pvc_vol("gone")]))
    assert pre.ok
    assert per_node["n1"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert per_node["n1"].reasons == ('looking up PVC default/gone: persistentvolumeclaim "gone" not found',)
    assert "not checked: the input has no CSINodes (per-driver volume attach limits)" in notes_of(state)


@pytest.mark.parametrize(
    ("dialect", "expect"),
    [
        pytest.param(V131, EXCEED, id="v1.31 also reads Node allocatable attach limits"),
        pytest.param(V134, "ok", id="v1.34 reads CSINode only"),
    ],
)
def test_node_allocatable_limits_before_v133(dialect: Dialect, expect: str) -> None:
    alloc = {csi_attach_limit_key(DRIVER): "1"}
    objs: list[dict[str, Any]] = [{"kind": "CSINode", "metadata": {"name": "n1"}, "spec": {"drivers": []}}]
    objs += bound("a") + bound("b")
    snap = snapshot(
        [node("n1", allocatable=alloc)], [pod("old", volumes=[pvc_vol("a")], node="n1")], objs, dialect
    )
    _, _, per_node = run(make(CSILimits, snap), pod("new", volumes=[pvc_vol("b")]))
    assert verdicts(per_node) == {"n1": expect}


def test_attach_limit_key_shortens_long_driver_names() -> None:
    assert csi_attach_limit_key("ebs.csi.aws.com") == "attachable-volumes-csi-ebs.csi.aws.com"
    long = "a" * 50
    key = csi_attach_limit_key(long)
    assert key.startswith("attachable-volumes-csi-" + "a" * 23)
    assert len(key) == len("attachable-volumes-csi-") + 23 + 16


def test_volume_attachments_count_from_v133() -> None:
    va = {
        "kind": "VolumeAttachment",
        "metadata": {"name": "va1"},
        "spec": {"attacher": DRIVER, "nodeName": "n1", "source": {"persistentVolumeName": "pv-a"}},
    }
    objs = [csinode("n1", {DRIVER: 1}), *bound("a"), *bound("b"), va]
    snap = snapshot([node("n1")], [], objs)
    _, _, per_node = run(make(CSILimits, snap), pod("new", volumes=[pvc_vol("b")]))
    assert verdicts(per_node) == {"n1": EXCEED}
