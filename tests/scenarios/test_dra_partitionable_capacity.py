"""DRA partitionable devices, consumable capacity and the filter timeout: each difference between releases
run on both sides. The recorded goldens (fixtures/golden-v136|v137/features/dra-*, config-dra-*) cover the
v1.36/v1.37 behaviour; these cases pin what differs and what the goldens cannot show.

Derived from k8s.io/dynamic-resource-allocation v0.36.5 and v0.37.2 (structured/internal/incubating:
pools_incubating.go GatherPools/buildPool, allocator_incubating.go allocateDevice/checkAvailableCounters/
deviceCapacityInUse, consumable_capacity.go) and kubernetes v1.36.5 dynamicresources.go Filter (#137607).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kdiagnose.scheduler.plugins.dynamicresources.allocator import dra_index
from kdiagnose.scheduler.plugins.dynamicresources.capacity import CapacityError, request_fits_capacity
from tests.scenarios.helpers import diagnose, diagnose_all, node, pod, scenario, snapshot_of

Obj = dict[str, Any]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DRIVER = "gpu.example.com"
GPU_CLASS: Obj = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": DRIVER},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
}
NO_FIT = "cannot allocate all claims"


def _slice(
    name: str,
    pool: str,
    count: int,
    *,
    node_name: str,
    devices: list[Obj] | None = None,
    shared: list[Obj] | None = None,
) -> Obj:
    spec: Obj = {
        "driver": DRIVER,
        "nodeName": node_name,
        "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
    }
    if devices is not None:
        spec["devices"] = devices
    if shared is not None:
        spec["sharedCounters"] = shared
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def _claim(name: str, exactly: Obj, status: Obj | None = None) -> Obj:
    out: Obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-claim-{name}"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER, **exactly}}]}
        },
    }
    if status is not None:
        out["status"] = status
    return out


def _allocated(pool: str, device: str, **result: Any) -> Obj:
    """A claim status with request gpu allocated on `device` of `pool` (plus the result's other fields)."""
    results = [{"request": "gpu", "driver": DRIVER, "pool": pool, "device": device, **result}]
    return {"allocation": {"devices": {"results": results}}}


def _user(claim: str = "c1", name: str = "user") -> Obj:
    p = pod(name, cpu="1", resourceClaims=[{"name": "gpu", "resourceClaimName": claim}])
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return p


def _counters(n: str) -> list[Obj]:
    return [{"name": "gpu-0", "counters": {"sms": {"value": n}}}]


def _part(name: str, sms: str, **extra: Any) -> Obj:
    return {
        "name": name,
        "consumesCounters": [{"counterSet": "gpu-0", "counters": {"sms": {"value": sms}}}],
        **extra,
    }


# ------------------------------------------------------------------------------------ partitionable


@pytest.mark.parametrize(
    ("version", "fits"),
    [
        pytest.param(
            # The API server drops sharedCounters/consumesCounters on create (resourceslice/strategy.go,
            # load/dra_strategy.py): the partitions are plain devices, recorded so by the v1.35.8 harness
            # (features/dra-partitionable-shared-counters).
            "v1.35.8",
            True,
            id="v1.35: DRAPartitionableDevices off: the API server drops the counters",
        ),
        pytest.param("v1.36.5", True, id="v1.36: partitions allocate from the pool's counter set"),
    ],
)
def test_partitionable_devices_gate(tmp_path: Path, version: str, fits: bool) -> None:
    objs = (
        node("g1"),
        GPU_CLASS,
        _slice("g1-counters", "g1", 2, node_name="g1", shared=_counters("8")),
        _slice("g1-parts", "g1", 2, node_name="g1", devices=[_part("half-0", "4"), _part("half-1", "4")]),
        _claim("c1", {"count": 2}),
        _user(),
    )
    v = diagnose(tmp_path, scenario(*objs), "default/user", version).verdicts["g1"]
    assert v.ok is fits
    if not fits:
        assert v.reasons == (NO_FIT,)


def test_counters_of_allocated_devices_on_other_nodes_are_used(tmp_path: Path) -> None:
    # One pool spans two nodes (its counter set on g1); a device of g2 already allocated takes 6 of the 8 SMs:
    # the pool's slices that do not target g1 still consume its counters (buildPool DeviceSlicesNotTargetingNode).
    objs = (
        node("g1"),
        node("g2"),
        GPU_CLASS,
        _slice("p-counters", "p", 3, node_name="g1", shared=_counters("8")),
        _slice("p-g1", "p", 3, node_name="g1", devices=[_part("a", "4")]),
        _slice("p-g2", "p", 3, node_name="g2", devices=[_part("b", "6")]),
        _claim("held", {"count": 1}, _allocated("p", "b")),
        _claim("c1", {"count": 1}),
        _user(),
    )
    v = diagnose(tmp_path, scenario(*objs), "default/user", "v1.37.2").verdicts["g1"]
    assert v.reasons == (NO_FIT,)  # 6 + 4 > 8


def _all_request_pool(tmp_path: Path, version: str) -> Any:
    # Pool p (3 slices announced, 2 published): its counter set is on g2, its devices on g1. On g3, v1.36 counts
    # the counter slice in (always relevant): the pool is incomplete and an "All" request fails with an error;
    # v1.37 takes only slices whose node selection matches: g3 has no pool p, nothing to allocate.
    objs = (
        node("g3"),
        GPU_CLASS,
        _slice("p-counters", "p", 3, node_name="g2", shared=_counters("8")),
        _slice("p-g1", "p", 3, node_name="g1", devices=[_part("a", "4")]),
        _claim("c1", {"allocationMode": "All"}),
        _user(),
    )
    return diagnose(tmp_path, scenario(*objs), "default/user", version).verdicts["g3"]


def test_counter_slices_follow_node_selection_from_v137(tmp_path: Path) -> None:
    v136 = _all_request_pool(tmp_path, "v1.36.5")
    assert v136.code.label == "Error"
    assert (
        "asks for all devices, but resource pool gpu.example.com/p is currently being updated" in v136.message
    )
    v137 = _all_request_pool(tmp_path, "v1.37.2")
    assert (v137.code.label, v137.reasons) == ("UnschedulableAndUnresolvable", (NO_FIT,))


def test_pools_are_tried_sorted_from_v136() -> None:
    # #136641: pools by (driver, pool), slices by name; pools with binding conditions last.
    def sl(name: str, pool: str, devices: list[Obj]) -> Obj:
        return _slice(name, pool, 1, node_name="g1", devices=devices)

    objs = (
        node("g1"),
        GPU_CLASS,
        sl("a-slice", "zz-pool", [{"name": "d1"}]),
        sl(
            "b-slice",
            "bc-pool",
            [{"name": "d2", "bindingConditions": ["attached"], "bindingFailureConditions": ["failed"]}],
        ),
        sl("c-slice", "aa-pool", [{"name": "d3"}]),
    )
    for version, want in (
        ("v1.35.8", ["zz-pool", "bc-pool", "aa-pool"]),
        ("v1.36.5", ["aa-pool", "zz-pool", "bc-pool"]),
    ):
        snap = snapshot_of(*objs, version=version)
        idx = dra_index(snap)
        assert [p.name for p in idx.pools_for(snap.node_infos[0].node)] == want, version


# ------------------------------------------------------------------------------------ consumable capacity

BANDWIDTH: Obj = {"bandwidth": {"value": "10", "requestPolicy": {"validRange": {"min": "1", "step": "1"}}}}


@pytest.mark.parametrize(
    ("version", "fits", "error"),
    [
        pytest.param("v1.36.5", True, None, id="v1.36: integer rounding (Value() of 1.0001 is 2)"),
        pytest.param(
            "v1.37.2",
            False,
            "capacity request cannot be represented in the device's range arithmetic",
            id="v1.37: fractional ranges in milli-units: 1.0001 is not representable, the allocation aborts",
        ),
    ],
)
def test_capacity_request_rounding(version: str, fits: bool, error: str | None) -> None:
    strict = version >= "v1.37"
    if error is None:
        assert request_fits_capacity(
            None, {"bandwidth": _q("1.0001")}, BANDWIDTH, None, fractional=strict, strict=strict
        )
        return
    with pytest.raises(CapacityError, match=error):
        request_fits_capacity(
            None, {"bandwidth": _q("1.0001")}, BANDWIDTH, None, fractional=strict, strict=strict
        )


def _q(text: str) -> Any:
    from kdiagnose.model.quantity import parse_quantity

    return parse_quantity(text)


def test_unrequested_capacity_without_policy_is_consumed_whole() -> None:
    caps: Obj = {"bandwidth": {"value": "10"}, "queues": {"value": "8"}}
    # No request for queues: a share consumes all 8, so a second share does not fit (consumable_capacity.go).
    assert request_fits_capacity(None, {"bandwidth": _q("1")}, caps, None, fractional=True, strict=True)
    assert not request_fits_capacity(
        {"queues": _q("8"), "bandwidth": _q("1")},
        {"bandwidth": _q("1")},
        caps,
        None,
        fractional=True,
        strict=True,
    )


@pytest.mark.parametrize(
    ("version", "fits"),
    [
        pytest.param(
            "v1.36.5", False, id="v1.36: a share without consumed capacity does not mark the device shared"
        ),
        pytest.param(
            "v1.37.2", True, id="v1.37: any allocated share marks it: its counters are not charged again"
        ),
    ],
)
def test_second_share_of_a_counter_consuming_device(tmp_path: Path, version: str, fits: bool) -> None:
    shared_dev = _part("nic-0", "8", allowMultipleAllocations=True)
    objs = (
        node("g1"),
        GPU_CLASS,
        _slice("g1-counters", "g1", 2, node_name="g1", shared=_counters("8")),
        _slice("g1-devs", "g1", 2, node_name="g1", devices=[shared_dev]),
        _claim(
            "held", {"count": 1}, _allocated("g1", "nic-0", shareID="6f3e0c1a-0000-4000-8000-000000000001")
        ),
        _claim("c1", {"count": 1}),
        _user(),
    )
    v = diagnose(tmp_path, scenario(*objs), "default/user", version).verdicts["g1"]
    assert v.ok is fits


def test_capacity_requests_need_the_gate(tmp_path: Path) -> None:
    # Before v1.36 devices are never shared: a second claim on an allowMultipleAllocations device does not fit.
    dev = {"name": "nic-0", "allowMultipleAllocations": True, "capacity": {"bandwidth": {"value": "10"}}}
    objs = (
        node("g1"),
        GPU_CLASS,
        _slice("g1-devs", "g1", 1, node_name="g1", devices=[dev]),
        _claim(
            "held",
            {"count": 1},
            _allocated(
                "g1",
                "nic-0",
                shareID="6f3e0c1a-0000-4000-8000-000000000002",
                consumedCapacity={"bandwidth": "2"},
            ),
        ),
        _claim("c1", {"count": 1, "capacity": {"requests": {"bandwidth": "2"}}}),
        _user(),
    )
    assert not diagnose(tmp_path, scenario(*objs), "default/user", "v1.35.8").verdicts["g1"].ok
    assert diagnose(tmp_path, scenario(*objs), "default/user", "v1.36.5").verdicts["g1"].ok


# ------------------------------------------------------------------------------------ filter timeout


def _timeout_case(tmp_path: Path, version: str, timeout: str) -> Any:
    case = FIXTURES / "golden-config" / "config-dra-filter-timeout.yaml"
    config = yaml.safe_load(
        (FIXTURES / "golden-config" / "config-dra-filter-timeout.config.yaml").read_text()
    )
    config["profiles"][0]["pluginConfig"][0]["args"]["filterTimeout"] = timeout
    return diagnose_all(tmp_path, case.read_text(), version, yaml.safe_dump(config))["ml/render-0"]


def test_filter_timeout_before_v136_is_unschedulable_and_unresolvable(tmp_path: Path) -> None:
    d = _timeout_case(tmp_path, "v1.35.8", "1ns")
    v = d.verdicts["gpu-1"]
    assert (v.plugin, v.code.label, v.reasons) == (
        "DynamicResources",
        "UnschedulableAndUnresolvable",
        ("timed out trying to allocate devices",),
    )
    assert d.message.startswith("0/1 nodes are available: 1 timed out trying to allocate devices.")


def test_filter_timeout_from_v136_is_an_error_naming_the_node(tmp_path: Path) -> None:
    d = _timeout_case(tmp_path, "v1.36.5", "1ns")
    assert (
        d.message
        == 'running "DynamicResources" filter plugin: node gpu-1: timed out trying to allocate devices'
    )


@pytest.mark.parametrize(
    ("timeout", "fits", "noted"),
    [
        pytest.param("0s", True, False, id="0 disables the timeout"),
        pytest.param("10ms", True, True, id="a short timeout is replayed as met, with a note"),
        pytest.param("10s", True, False, id="the default is not worth a note"),
    ],
)
def test_timeouts_kdiagnose_cannot_time(tmp_path: Path, timeout: str, fits: bool, noted: bool) -> None:
    d = _timeout_case(tmp_path, "v1.37.2", timeout)
    assert d.scheduled is fits
    assert any("filterTimeout" in n for n in d.notes) is noted


# ------------------------------------------------------------------------------------ DRA-backed extended resources


def test_extended_resource_scoring_before_v136_sees_only_device_plugins(tmp_path: Path) -> None:
    case = FIXTURES / "golden-config" / "config-dra-extended-resource-scoring.yaml"
    config = (FIXTURES / "golden-config" / "config-dra-extended-resource-scoring.config.yaml").read_text()
    d = diagnose_all(tmp_path, case.read_text(), "v1.35.8", config)["ml/train-0"]
    # DRAExtendedResource is off: example.com/gpu is an ordinary extended resource only gpu-dp advertises.
    assert d.feasible == ["gpu-dp"]
    assert d.verdicts["gpu-1"].reasons == ("Insufficient example.com/gpu",)
