"""cluster-autoscaler's status ConfigMap, both formats, read from the fixtures (shapes from
clusterstate/api/types.go 1.31 and clusterstate/api/utils.go GetReadableString 1.29)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kdiagnose.autoscaler.status import (
    GroupStatus,
    find_status_configmap,
    parse_status,
    parse_status_configmap,
)
from kdiagnose.load.files import load_paths

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "autoscaler"


def _configmap(name: str) -> dict[str, Any]:
    objs = [r.obj for r in load_paths([str(FIXTURES / name)]).objects if r.obj.get("kind") == "ConfigMap"]
    cm = find_status_configmap(objs)
    assert cm is not None
    return cm


def test_yaml_status_of_recent_releases_gives_every_group_field() -> None:
    st = parse_status_configmap(_configmap("ca-at-max.yaml"))
    assert st.format == "yaml"
    assert st.source == "configmap kube-system/cluster-autoscaler-status"
    assert st.autoscaler_status == "Running" and st.health == "Healthy" and st.scale_up == "NoActivity"
    assert st.time == "2026-11-30 14:02:11.480151346 +0000 UTC"
    apps = st.group("eks-apps-4ac6b7d2-1b2c-3d4e-5f60-718293a4b5c6")
    assert apps is not None
    assert (apps.health, apps.registered, apps.ready, apps.unready, apps.long_unregistered) == (
        "Healthy",
        3,
        3,
        0,
        0,
    )
    assert (apps.cloud_provider_target, apps.min_size, apps.max_size) == (3, 1, 3)
    assert apps.scale_up == "NoActivity" and apps.scale_down == "NoCandidates"
    assert apps.room == 0
    assert apps.blocked() == "at its max size (3 of max 3)"
    batch = st.group("eks-batch-9d1e2f3a-4b5c-6d7e-8f90-a1b2c3d4e5f6")
    assert batch is not None and batch.room == 5 and batch.blocked() == ""


def test_plain_text_status_of_releases_before_1_30_gives_the_same_fields() -> None:
    st = parse_status_configmap(_configmap("ca-room-text.yaml"))
    assert st.format == "text"
    assert st.time == "2026-12-01 09:15:02.731046197 +0000 UTC"
    assert st.health == "Healthy" and st.scale_up == "InProgress"
    assert [g.name for g in st.groups] == ["aks-apps-31415926-vmss", "aks-system-27182818-vmss"]
    apps = st.groups[0]
    assert (apps.ready, apps.unready, apps.not_started, apps.registered, apps.long_unregistered) == (
        2,
        0,
        0,
        2,
        0,
    )
    assert (apps.cloud_provider_target, apps.min_size, apps.max_size) == (3, 1, 5)
    assert apps.scale_up == "InProgress" and apps.scale_down == "NoCandidates"
    assert apps.room == 2 and apps.blocked() == ""


def test_backoff_says_why_from_backoff_info() -> None:
    st = parse_status_configmap(_configmap("check/ca-status-backoff.yaml"))
    (apps,) = [g for g in st.groups if g.name.startswith("eks-apps-")]
    assert apps.scale_up == "Backoff" and apps.backoff_code == "InsufficientInstanceCapacity"
    assert apps.blocked().startswith(
        "in backoff after a failed scale-up (InsufficientInstanceCapacity: We currently do not have sufficient m5.large capacity"
    )


@pytest.mark.parametrize(
    ("group", "want"),
    [
        pytest.param(
            GroupStatus("g", health="Unhealthy", ready=1, unready=2, cloud_provider_target=3, max_size=5),
            "unhealthy (ready=1 unready=2 notStarted=0 longUnregistered=0 of cloudProviderTarget=3): "
            "cluster-autoscaler does not scale up an unhealthy group",
            id="an unhealthy group is blocked even with room",
        ),
        pytest.param(
            GroupStatus("g", health="Healthy", scale_up="Backoff", cloud_provider_target=1, max_size=5),
            "in backoff after a failed scale-up",
            id="backoff without backoffInfo (older releases) still blocks",
        ),
        pytest.param(
            GroupStatus("g", health="Healthy", cloud_provider_target=2, max_size=3),
            "",
            id="room: not blocked",
        ),
    ],
)
def test_blocked(group: GroupStatus, want: str) -> None:
    assert group.blocked() == want


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("just some words", id="neither format"),
        pytest.param("nodeGroups: 3\n", id="nodeGroups not a list"),
        pytest.param(
            "nodeGroups:\n- health: {maxSize: three}\n  name: g\n", id="a count that is not an integer"
        ),
        pytest.param("nodeGroups:\n- health: {maxSize: 3}\n", id="a group without a name"),
        pytest.param("a: [unclosed\n", id="invalid YAML"),
    ],
)
def test_unreadable_status_is_a_value_error_naming_the_field(text: str) -> None:
    with pytest.raises(ValueError, match=r"^status"):
        parse_status(text)


def test_status_configmap_found_beside_other_configmaps_in_any_order() -> None:
    cm = _configmap("ca-at-max.yaml")
    other = {"kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt", "namespace": "kube-system"}}
    custom = {
        "kind": "ConfigMap",
        "metadata": {
            "name": "ca-status",
            "namespace": "autoscaler",
            "annotations": {"cluster-autoscaler.kubernetes.io/last-updated": "2026-11-30 14:02:11 +0000 UTC"},
        },
        "data": {"status": "time: x\n"},
    }
    assert find_status_configmap([other, custom, cm]) is cm
    assert find_status_configmap([cm, custom, other]) is cm
    # A CA run with another --namespace/--status-config-map-name is found by the annotation it writes.
    assert find_status_configmap([other, custom]) is custom
    assert find_status_configmap([other]) is None
