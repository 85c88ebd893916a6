"""Port of a representative subset of the structured allocator table
(staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go),
run against kdiagnose's allocator (the incubating implementation, which v1.34/v1.35 select by default):
ExactCount across slices, allocationMode All (with and without competing claims, incomplete pools,
devices already allocated), missing/unknown/empty device classes, obsolete and duplicate slices.

Results are compared as upstream's deviceAllocationResult lists: (request, driver, pool, device) per claim,
None when the claims do not fit the node. The obsolete/duplicate-slice cases follow the v1.35 pool
handling (pools_incubating.go on master), so they run with the v1.35 dialect.
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node
from kdiagnose.scheduler.plugins.dynamicresources.allocator import (
    AllocationError,
    Allocator,
    FailedOnNode,
    _Run,
    dra_index,
    parse_claim_requests,
)
from kdiagnose.versions import Dialect, dialect_for
from tests.upstream.builders import V134, new_snapshot

Obj = dict[str, Any]
V135 = dialect_for("v1.35.4")
NODE1, REGION1 = "node-1", "region-1"
CLASS_A, CLASS_B, DRIVER_A, DRIVER_B = "class-a", "class-b", "driver-a", "driver-b"
POOL1, POOL2 = "pool-1", "pool-2"
REQ0 = "req-0"
D1, D2 = "device-1", "device-2"


def node(name: str, region: str) -> Node:
    return Node({"metadata": {"name": name, "labels": {"region": region, "planet": "earth"}}, "status": {}})


def klass(name: str, driver: str) -> Obj:
    """class(): a DeviceClass selecting its driver by CEL."""
    return {
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def slice_(
    name: str, node_name: str, pool: str, driver: str, devices: list[str], count: int = 1, gen: int = 1
) -> Obj:
    """sliceWithDevices / sliceWithOneDevice (device-1): a slice for one node."""
    return {
        "metadata": {"name": name},
        "spec": {
            "nodeName": node_name,
            "driver": driver,
            "pool": {"name": pool, "generation": gen, "resourceSliceCount": count},
            "devices": [{"name": d} for d in devices],
        },
    }


def exact(name: str, klass_name: str, count: int = 1) -> Obj:
    return {
        "name": name,
        "exactly": {"deviceClassName": klass_name, "allocationMode": "ExactCount", "count": count},
    }


def all_(name: str, klass_name: str) -> Obj:
    return {"name": name, "exactly": {"deviceClassName": klass_name, "allocationMode": "All"}}


def claim(name: str, *requests: Obj) -> tuple[str, Obj]:
    return name, {"devices": {"requests": list(requests)}}


def allocated_claim(driver: str, pool: str, device: str) -> Obj:
    """An allocated claim elsewhere: what allocatedDevices lists."""
    return {
        "metadata": {"name": "other", "namespace": "default"},
        "status": {
            "allocation": {"devices": {"results": [{"driver": driver, "pool": pool, "device": device}]}}
        },
    }


Result = list[list[tuple[str, str, str, str]]] | None


def _allocate(
    claims: list[tuple[str, Obj]],
    classes: list[Obj],
    slices: list[Obj],
    allocated: list[Obj],
    dialect: Dialect,
) -> Result:
    snap = new_snapshot(
        [],
        [node(NODE1, REGION1)],
        {"DeviceClass": classes, "ResourceSlice": slices, "ResourceClaim": allocated},
        dialect,
    )
    a = Allocator(dra_index(snap), [parse_claim_requests(n, spec) for n, spec in claims])
    run = _Run(a, snap.node_infos[0].node)
    if run.run() is None:
        return None
    return [[(ref, *did) for ref, did in devs] for devs in run.result]


OK_A = [klass(CLASS_A, DRIVER_A)]
OK_AB = [klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)]
ONE_A = slice_("slice-1", NODE1, POOL1, DRIVER_A, [D1])
ONE_B = slice_("slice-1", NODE1, POOL1, DRIVER_B, [D1])


CASES: list[Any] = [
    pytest.param(
        [claim("claim-0", exact(REQ0, CLASS_A, 2))],
        OK_A,
        [ONE_A, slice_("slice-2", NODE1, POOL2, DRIVER_A, [D1])],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (REQ0, DRIVER_A, POOL2, D1)]],
        id="devices-split-across-different-slices",
    ),
    pytest.param([claim("claim-0", exact(REQ0, CLASS_A))], OK_A, [], [], None, id="no-slices"),
    pytest.param(
        [claim("claim-0", exact(REQ0, CLASS_A)), claim("claim-0", exact("req-1", CLASS_A))],
        OK_A,
        [ONE_A],
        [],
        None,
        id="not-enough-suitable-devices",
    ),
    pytest.param([], OK_A, [ONE_A], [], [], id="no-claims-to-allocate"),
    pytest.param(
        [claim("claim-0", all_(REQ0, CLASS_A))],
        OK_A,
        [ONE_A],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1)]],
        id="all-devices-single",
    ),
    pytest.param(
        [claim("claim-0", all_(REQ0, CLASS_A))],
        OK_A,
        [ONE_A, slice_("slice-1", NODE1, POOL2, DRIVER_A, [D1])],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (REQ0, DRIVER_A, POOL2, D1)]],
        id="all-devices-many",
    ),
    pytest.param(
        [claim("claim-0", all_(REQ0, CLASS_A)), claim("claim-1", exact(REQ0, CLASS_B))],
        OK_AB,
        [ONE_A, ONE_B],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1)], [(REQ0, DRIVER_B, POOL1, D1)]],
        id="all-devices-plus-another",
    ),
    pytest.param(
        [claim("claim-1", exact(REQ0, CLASS_B)), claim("claim-0", all_(REQ0, CLASS_A))],
        OK_AB,
        [ONE_A, ONE_B],
        [],
        [[(REQ0, DRIVER_B, POOL1, D1)], [(REQ0, DRIVER_A, POOL1, D1)]],
        id="all-devices-plus-another-reversed",
    ),
    pytest.param(
        [claim("claim-0", all_(REQ0, CLASS_A)), claim("claim-1", exact(REQ0, CLASS_B))],
        OK_AB,
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, [D1, D2]), ONE_B],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (REQ0, DRIVER_A, POOL1, D2)], [(REQ0, DRIVER_B, POOL1, D1)]],
        id="all-devices-many-plus-another",
    ),
    pytest.param(
        [claim("claim-1", exact(REQ0, CLASS_B)), claim("claim-0", all_(REQ0, CLASS_A))],
        OK_AB,
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, [D1, D2]), ONE_B],
        [],
        [[(REQ0, DRIVER_B, POOL1, D1)], [(REQ0, DRIVER_A, POOL1, D1), (REQ0, DRIVER_A, POOL1, D2)]],
        id="all-devices-many-plus-another-reversed",
    ),
    pytest.param(
        [claim("claim-1", exact(REQ0, CLASS_A)), claim("claim-0", all_(REQ0, CLASS_A))],
        OK_A,
        [ONE_A],
        [],
        None,
        id="all-devices-no-solution",
    ),
    pytest.param(
        [claim("claim-0", all_(REQ0, CLASS_A)), claim("claim-1", exact(REQ0, CLASS_A))],
        OK_A,
        [ONE_A],
        [],
        None,
        id="all-devices-no-solution-reversed",
    ),
    pytest.param(
        [claim("claim-0", all_(REQ0, CLASS_A))],
        OK_A,
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, [])],
        [],
        None,
        id="all-devices-slice-without-devices",
    ),
    pytest.param([claim("claim-0", all_(REQ0, CLASS_A))], OK_A, [], [], None, id="all-devices-no-slices"),
    pytest.param(
        [claim("claim-0", all_(REQ0, CLASS_A))],
        OK_A,
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, [D1, D2])],
        [allocated_claim(DRIVER_A, POOL1, D1)],
        None,
        id="all-devices-some-allocated",
    ),
]


@pytest.mark.parametrize("dialect", [pytest.param(V134, id="v1.34"), pytest.param(V135, id="v1.35")])
@pytest.mark.parametrize(("claims", "classes", "slices", "allocated", "expected"), CASES)
def test_allocate(
    claims: list[tuple[str, Obj]],
    classes: list[Obj],
    slices: list[Obj],
    allocated: list[Obj],
    expected: Result,
    dialect: Dialect,
) -> None:
    assert _allocate(claims, classes, slices, allocated, dialect) == expected


ERRORS: list[Any] = [
    pytest.param(
        [claim("claim-0", exact(REQ0, CLASS_A))],
        [],
        [ONE_A],
        "could not retrieve device class class-a",
        id="no-classes",
    ),
    pytest.param(
        [claim("claim-0", exact(REQ0, "unknown-class"))],
        OK_A,
        [ONE_A],
        "could not retrieve device class unknown-class",
        id="unknown-class",
    ),
    pytest.param(
        [claim("claim-0", exact(REQ0, ""))],
        OK_A,
        [ONE_A],
        "claim claim-0, request req-0: missing device class name (unsupported request type?)",
        id="empty-class",
    ),
    pytest.param(
        [claim("claim-0", all_(REQ0, CLASS_A))],
        OK_A,
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, [D1], count=2)],
        "claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being "
        "updated",
        id="all-devices-of-the-incomplete-pool",
    ),
]


@pytest.mark.parametrize("dialect", [pytest.param(V134, id="v1.34"), pytest.param(V135, id="v1.35")])
@pytest.mark.parametrize(("claims", "classes", "slices", "error"), ERRORS)
def test_allocate_error(
    claims: list[tuple[str, Obj]], classes: list[Obj], slices: list[Obj], error: str, dialect: Dialect
) -> None:
    with pytest.raises(AllocationError) as e:
        _allocate(claims, classes, slices, [], dialect)
    assert error in str(e.value)


def test_obsolete_slice_v135() -> None:
    # "obsolete-slice": generation 2 of pool-1 has only one of its two slices; the generation-1 slice is
    # obsolete. Nothing can be allocated.
    slices = [
        slice_("slice-1-obsolete", NODE1, POOL1, DRIVER_A, [D1], count=2, gen=1),
        slice_("slice-1-obsolete", NODE1, POOL1, DRIVER_A, [D2], count=2, gen=2),
    ]
    assert _allocate([claim("claim-0", exact(REQ0, CLASS_A))], OK_A, slices, [], V135) is None


def test_duplicate_slice_v135() -> None:
    # "duplicate-slice": two identical slices complete a two-slice pool with a duplicate device name.
    slices = [
        slice_("slice-1", NODE1, POOL1, DRIVER_A, [D1], count=2),
        slice_("slice-1-2", NODE1, POOL1, DRIVER_A, [D1], count=2),
    ]
    with pytest.raises(FailedOnNode, match="invalid resource pools were encountered"):
        _allocate([claim("claim-0", exact(REQ0, CLASS_A))], OK_A, slices, [], V135)
