"""DRA gates that turned on in v1.36 and v1.37, each run on both sides.

Derived from the structured allocator (k8s.io/dynamic-resource-allocation v0.36.3/v0.37.2,
structured/internal/incubating/allocator_incubating.go: isSelectable, allocateDevice,
taintPreventsAllocation; resourceclaim/devicetoleration.go ToleratesTaint) and the ResourceSlice tracker
(resourceslice/tracker/tracker.go applyPatches) that applies DeviceTaintRules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scenarios.helpers import diagnose, node, pod, scenario

Obj = dict[str, Any]
GPU_CLASS: Obj = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}
NO_FIT = "cannot allocate all claims"


def _slice(device: Obj) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "g1-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "g1",
            "pool": {"name": "g1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", **device}],
        },
    }


def _claim(tolerations: list[Obj] | None = None) -> Obj:
    exactly: Obj = {"deviceClassName": "gpu.example.com", "count": 1}
    if tolerations:
        exactly["tolerations"] = tolerations
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c1", "namespace": "default", "uid": "uid-claim-c1"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}},
    }


def _user() -> Obj:
    p = pod("user", cpu="1", resourceClaims=[{"name": "gpu", "resourceClaimName": "c1"}])
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return p


def _verdict(tmp_path: Path, version: str, *objs: Obj) -> Any:
    d = diagnose(tmp_path, scenario(node("g1"), GPU_CLASS, *objs, _user()), "default/user", version)
    return d.verdicts["g1"]


TAINT: Obj = {"key": "example.com/unhealthy", "value": "ecc", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("version", "device", "tolerations", "fits"),
    [
        pytest.param("v1.35.4", {"taints": [TAINT]}, None, True, id="v1.35: DRADeviceTaints off"),
        pytest.param("v1.36.3", {"taints": [TAINT]}, None, False, id="v1.36: a NoSchedule taint keeps it"),
        pytest.param(
            "v1.36.3",
            {"taints": [TAINT]},
            [{"key": "example.com/unhealthy", "operator": "Exists"}],
            True,
            id="v1.36: tolerated by Exists",
        ),
        pytest.param(
            "v1.36.3",
            {"taints": [TAINT]},
            [{"key": "example.com/unhealthy", "value": "other"}],
            False,
            id="v1.36: Equal with another value does not tolerate",
        ),
        pytest.param(
            "v1.36.3",
            {"taints": [{**TAINT, "effect": "None"}]},
            None,
            True,
            id="v1.36: effect None never prevents allocation",
        ),
    ],
)
def test_device_taints(
    tmp_path: Path, version: str, device: Obj, tolerations: list[Obj] | None, fits: bool
) -> None:
    v = _verdict(tmp_path, version, _slice(device), _claim(tolerations))
    if fits:
        assert v.ok
    else:
        assert (v.plugin, v.code.label, v.reasons) == (
            "DynamicResources",
            "UnschedulableAndUnresolvable",
            (NO_FIT,),
        )


def _rule(selector: Obj | None) -> Obj:
    spec: Obj = {"taint": {"key": "drain", "value": "true", "effect": "NoExecute"}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "r"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("version", "selector", "fits"),
    [
        pytest.param("v1.36.3", {"driver": "gpu.example.com"}, True, id="v1.36: DRADeviceTaintRules off"),
        pytest.param("v1.37.2", {"driver": "gpu.example.com"}, False, id="v1.37: the rule taints the device"),
        pytest.param(
            "v1.37.2", {"driver": "gpu.example.com", "device": "gpu-1"}, True, id="v1.37: another device"
        ),
        pytest.param("v1.37.2", {"pool": "other"}, True, id="v1.37: another pool"),
        pytest.param("v1.37.2", {}, False, id="v1.37: an empty selector matches every device"),
        pytest.param("v1.37.2", None, True, id="v1.37: no selector matches no device"),
    ],
)
def test_device_taint_rules(tmp_path: Path, version: str, selector: Obj | None, fits: bool) -> None:
    v = _verdict(tmp_path, version, _slice({}), _claim(), _rule(selector))
    assert v.ok is fits


@pytest.mark.parametrize("version", ["v1.35.4", "v1.36.3"])
def test_devices_with_binding_conditions(tmp_path: Path, version: str) -> None:
    # v1.36 (DRADeviceBindingConditions on): isSelectable selects them. v1.35: the API server drops the
    # fields when the slice is created (resourceslice/strategy.go dropDisabledDRADeviceBindingConditionsFields,
    # load/dra_strategy.py), so the scheduler sees a plain device and selects it too.
    device = {"bindingConditions": ["attached"], "bindingFailureConditions": ["failed"], "bindsToNode": True}
    v = _verdict(tmp_path, version, _slice(device), _claim())
    assert v.ok


MAPPED_CLASS: Obj = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com", "creationTimestamp": "2026-01-01T00:00:00Z"},
    "spec": {
        "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
        "extendedResourceName": "example.com/gpu",
    },
}


def _gpu_slice(node_name: str, n: int) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}"} for i in range(n)],
        },
    }


def _extended_case(count: int) -> str:
    return scenario(
        node("g1"),
        node("n2", extra={"example.com/gpu": "1"}),
        node("n3"),
        MAPPED_CLASS,
        _gpu_slice("g1", 2),
        pod("train", cpu="1", extra_requests={"example.com/gpu": str(count)}),
    )


def test_extended_resource_mapped_by_a_device_class_v135(tmp_path: Path) -> None:
    # DRAExtendedResource off: NodeResourcesFit counts the resource against allocatable only.
    d = diagnose(tmp_path, _extended_case(2), "default/train", "v1.35.4")
    assert not d.scheduled
    assert {n_: d.verdicts[n_].plugin for n_ in ("g1", "n2", "n3")} == {
        "g1": "NodeResourcesFit",
        "n2": "NodeResourcesFit",
        "n3": "NodeResourcesFit",
    }


def test_extended_resource_mapped_by_a_device_class_v136(tmp_path: Path) -> None:
    # fit.go shouldDelegateResourceToDRA: nodes without the resource in allocatable leave it to
    # DynamicResources (filterExtendedResources + the allocator); n2's device plugin keeps it in Fit.
    d = diagnose(tmp_path, _extended_case(2), "default/train", "v1.36.3")
    assert d.scheduled and d.chosen == "g1"
    n2, n3 = d.verdicts["n2"], d.verdicts["n3"]
    assert (n2.plugin, n2.reasons) == ("NodeResourcesFit", ("Insufficient example.com/gpu",))
    assert (n3.plugin, n3.code.label, n3.reasons) == (
        "DynamicResources",
        "UnschedulableAndUnresolvable",
        ("cannot allocate all claims",),
    )


def test_extended_resource_beyond_the_devices_v136(tmp_path: Path) -> None:
    # The special claim is in memory, never deallocated: DynamicResources' PostFilter says
    # "still not schedulable" (not "no new claims to deallocate").
    d = diagnose(tmp_path, _extended_case(3), "default/train", "v1.36.3")
    assert d.message == (
        "0/3 nodes are available: 1 Insufficient example.com/gpu, 2 cannot allocate all claims. still not "
        "schedulable, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
