"""DynamicResources PostFilter for pods WITH claims, before DefaultPreemption (v1.34.1 and v1.35.4).

Derived from dynamicresources.go: Filter records a claim as unavailable when its allocation's node selector
does not match the node (`resourceclaim not available on the node`, UU). PostFilter (identical in 1.34 and
1.35) then picks an unavailable claim and, when nobody else holds it (reservedFor empty or only this pod),
deallocates it and returns U `deallocation of ResourceClaim completed`; otherwise U `still not schedulable`.
Both are U, so RunPostFilterPlugins goes on to DefaultPreemption and joins the reasons with ", ".
Before v1.34 DRA is off and the API server drops `spec.resourceClaims`: the pod schedules as if claimless.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scenarios.helpers import diagnose, node, pod, scenario

GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}


def _slice(node_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}],
        },
    }


def _claim(reserved_for: list[dict[str, str]]) -> dict[str, Any]:
    """Claim `c1`, allocated on g1 (device g1/gpu-0)."""
    status: dict[str, Any] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "g1", "device": "gpu-0"}]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["g1"]}]}
                ]
            },
        }
    }
    if reserved_for:
        status["reservedFor"] = reserved_for
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c1", "namespace": "default", "uid": "uid-claim-c1"},
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 1}}]
            }
        },
        "status": status,
    }


def _user() -> dict[str, Any]:
    p = pod("user", cpu="1", resourceClaims=[{"name": "gpu", "resourceClaimName": "c1"}])
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return p


TAINT = [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]


def _cluster(reserved_for: list[dict[str, str]], tainted_others: bool = False) -> str:
    taints = TAINT if tainted_others else None
    return scenario(
        node("g1", cpu="2"),
        node("g2", cpu="2", taints=taints),
        node("g3", cpu="2", taints=taints),
        GPU_CLASS,
        _slice("g1"),
        _slice("g2"),
        _slice("g3"),
        _claim(reserved_for),
        # g1 is full: the pod cannot follow its claim there.
        pod("busy", node_name="g1", cpu="1500m"),
        _user(),
    )


NOT_HELPFUL_TAIL = (
    "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
    "2 Preemption is not helpful for scheduling."
)


@pytest.mark.parametrize(
    ("version", "reserved_for", "tainted", "want"),
    [
        pytest.param(
            "v1.34.1",
            [],
            False,
            "0/3 nodes are available: 1 Insufficient cpu, 2 resourceclaim not available on the node. "
            "deallocation of ResourceClaim completed, " + NOT_HELPFUL_TAIL,
            id="v1.34: an allocated claim nobody holds is deallocated; preemption still runs after it",
        ),
        pytest.param(
            "v1.35.4",
            [],
            False,
            "0/3 nodes are available: 1 Insufficient cpu, 2 resourceclaim not available on the node. "
            "deallocation of ResourceClaim completed, " + NOT_HELPFUL_TAIL,
            id="v1.35: same PostFilter text",
        ),
        pytest.param(
            "v1.34.1",
            [{"resource": "pods", "name": "user", "uid": "uid-default-user"}],
            False,
            "0/3 nodes are available: 1 Insufficient cpu, 2 resourceclaim not available on the node. "
            "deallocation of ResourceClaim completed, " + NOT_HELPFUL_TAIL,
            id="reserved only for the pod itself still counts as free to deallocate",
        ),
        pytest.param(
            "v1.34.1",
            [{"resource": "pods", "name": "other", "uid": "uid-other"}],
            False,
            "0/3 nodes are available: 1 Insufficient cpu, 2 resourceclaim not available on the node. "
            "still not schedulable, " + NOT_HELPFUL_TAIL,
            id="reserved for another pod: not deallocated",
        ),
        pytest.param(
            "v1.35.4",
            [],
            True,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s). "
            "still not schedulable, " + NOT_HELPFUL_TAIL,
            id="the claim's Filter never ran on the other nodes (taints first): no unavailable claim recorded",
        ),
    ],
)
def test_dra_postfilter_with_claims(
    tmp_path: Path, version: str, reserved_for: list[dict[str, str]], tainted: bool, want: str
) -> None:
    d = diagnose(tmp_path, _cluster(reserved_for, tainted), "default/user", version)
    assert d.message == want


def test_before_v134_claims_are_dropped(tmp_path: Path) -> None:
    """v1.33: DynamicResources is not in the profile and the claim reference is dropped: g2 and g3 fit."""
    d = diagnose(tmp_path, _cluster([]), "default/user", "v1.33.3")
    assert d.scheduled
    assert sorted(d.feasible) == ["g2", "g3"]
