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


# ---------------------------------------------------------------- constraints, admin access, CEL selectors,
# prioritized lists, node selection (allocator_testing.go, TestAllocator; v1.34 semantics).
# The attribute names are fully qualified with driver-a (intAttribute = "driver-a/numa", ...) while the
# devices publish the bare names, so lookupAttribute's driver-domain fallback is exercised throughout.
# Results omit the AdminAccess flag, the allocation configs and the node selector of the allocation result:
# kdiagnose only decides fit; the (request, driver, pool, device) list is what decides it.
# Skipped: admin-access-disabled and prioritized-list-disabled (both gates are on in every dialect here),
# partitionable/taint/binding-condition/consumable-capacity cases (gates off by default in v1.34).

C = Obj
INT_ATTR, VERSION_ATTR = f"{DRIVER_A}/numa", f"{DRIVER_A}/driverVersion"
STRING_ATTR, BOOL_ATTR = f"{DRIVER_A}/stringAttribute", f"{DRIVER_A}/boolAttribute"
NON_EXISTENT_ATTR = f"{DRIVER_A}/NonExistentAttribute"
REQ1, REQ2, SUB0, SUB1 = "req-1", "req-2", "subReq-0", "subReq-1"
D0, D3 = "device-0", "device-3"
CLAIM0, CLAIM1 = "claim-0", "claim-1"


def mem_sel(q: str) -> Obj:
    """The recurring selector `device.capacity["driver-a"].memory.compareTo(quantity(q)) >= 0`."""
    return {"cel": {"expression": f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{q}")) >= 0'}}


def cel(expression: str) -> Obj:
    return {"cel": {"expression": expression}}


def dev(name: str, capacity: dict[str, str] | None = None, attributes: dict[str, Obj] | None = None) -> Obj:
    """device(name, capacity, attributes): attributes as API values ({"int": 1}, {"version": "1.0.0"})."""
    d: Obj = {"name": name}
    if capacity is not None:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if attributes is not None:
        d["attributes"] = attributes
    return d


def slice_devs(name: str, selection: Any, pool: str, driver: str, devices: list[Obj], count: int = 1) -> Obj:
    """sliceWithDevices: selection is a node name, "all" (nodeSelectionAll) or a NodeSelector dict."""
    spec: Obj = {
        "driver": driver,
        "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
        "devices": devices,
    }
    if isinstance(selection, dict):
        spec["nodeSelector"] = selection
    elif selection == "all":
        spec["allNodes"] = True
    else:
        spec["nodeName"] = selection
    return {"metadata": {"name": name}, "spec": spec}


def label_selector(key: str, value: str) -> Obj:
    """nodeLabelSelector(key, value)."""
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}


def req(
    name: str, klass_name: str, count: int = 1, *selectors: Obj, admin: bool = False, mode: str = ""
) -> Obj:
    """request(name, class, count, selectors...), optionally with AdminAccess / AllocationMode set."""
    exactly: Obj = {"deviceClassName": klass_name, "allocationMode": mode or "ExactCount", "count": count}
    if mode == "All":
        del exactly["count"]
    if selectors:
        exactly["selectors"] = list(selectors)
    if admin:
        exactly["adminAccess"] = True
    return {"name": name, "exactly": exactly}


def sub(name: str, klass_name: str, count: int = 1, *selectors: Obj, mode: str = "ExactCount") -> Obj:
    s: Obj = {"name": name, "deviceClassName": klass_name, "allocationMode": mode}
    if mode != "All":
        s["count"] = count
    if selectors:
        s["selectors"] = list(selectors)
    return s


def prioritized(name: str, *subs: Obj) -> Obj:
    return {"name": name, "firstAvailable": list(subs)}


def claim_c(
    name: str, constraints: list[Obj], *requests: Obj, config: list[Obj] | None = None
) -> tuple[str, Obj]:
    """claimWithRequests(name, constraints, requests...)."""
    devices: Obj = {"requests": list(requests), "constraints": constraints}
    if config is not None:
        devices["config"] = config
    return name, {"devices": devices}


def match(attribute: str, *requests: str) -> Obj:
    c: Obj = {"matchAttribute": attribute}
    if requests:
        c["requests"] = list(requests)
    return c


def allocated_devices(*ids: tuple[str, str, str]) -> list[Obj]:
    """allocatedDevices: one claim elsewhere holding all of them."""
    results = [{"request": "r", "driver": d, "pool": p, "device": n} for d, p, n in ids]
    return [
        {
            "metadata": {"name": "allocated", "namespace": "default"},
            "status": {"allocation": {"devices": {"results": results}}},
        }
    ]


def class_with_config(name: str, driver: str, attribute: str) -> Obj:
    c = klass(name, driver)
    c["spec"]["config"] = [{"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}]
    return c


ALL_ATTRS: Obj = {
    "driverVersion": {"version": "1.0.0"},
    "numa": {"int": 1},
    "stringAttribute": {"string": "stringAttributeValue"},
    "boolAttribute": {"bool": True},
}
MEM = "memory"
S_1G_2G = slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [dev(D1, {MEM: "1Gi"}), dev(D2, {MEM: "2Gi"})])
S_2G_1G = slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [dev(D2, {MEM: "2Gi"}), dev(D1, {MEM: "1Gi"})])
TWO_A = slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [dev(D1), dev(D2)])
A1D = (DRIVER_A, POOL1, D1)


def two_with(attr: str, v1: Obj, v2: Obj) -> Obj:
    return slice_devs(
        "slice-1", NODE1, POOL1, DRIVER_A, [dev(D1, None, {attr: v1}), dev(D2, None, {attr: v2})]
    )


def multi_slice(name: str, node_name: str, pool: str, driver: str, n: int) -> Obj:
    """sliceWithMultipleDevices: device-0 .. device-(n-1)."""
    return slice_devs(name, node_name, pool, driver, [dev(f"device-{i}") for i in range(n)])


MORE_CASES: list[Any] = [
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, 1, mem_sel("1Gi")), req(REQ1, CLASS_A, 1, mem_sel("2Gi")))],
        OK_A,
        [S_1G_2G],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (REQ1, DRIVER_A, POOL1, D2)]],
        id="small-and-large",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, 1, mem_sel("1Gi")), req(REQ1, CLASS_A, 1, mem_sel("2Gi")))],
        OK_A,
        [S_2G_1G],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (REQ1, DRIVER_A, POOL1, D2)]],
        id="small-and-large-backtrack-requests",
    ),
    pytest.param(
        [
            claim_c(CLAIM0, [], req(REQ0, CLASS_A, 1, mem_sel("1Gi"))),
            claim_c(CLAIM1, [], req(REQ1, CLASS_A, 1, mem_sel("2Gi"))),
        ],
        OK_A,
        [S_2G_1G],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1)], [(REQ1, DRIVER_A, POOL1, D2)]],
        id="small-and-large-backtrack-claims",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, admin=True, mode="All"))],
        OK_A,
        [TWO_A],
        allocated_devices(A1D),
        [[(REQ0, DRIVER_A, POOL1, D1), (REQ0, DRIVER_A, POOL1, D2)]],
        id="all-devices-some-allocated-admin-access",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, admin=True), req(REQ1, CLASS_A, admin=True, mode="All"))],
        OK_A,
        [TWO_A],
        [],
        None,
        id="all-devices-some-allocating-admin-access",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, 2, admin=True))],
        OK_A,
        [TWO_A],
        allocated_devices(A1D),
        [[(REQ0, DRIVER_A, POOL1, D1), (REQ0, DRIVER_A, POOL1, D2)]],
        id="count-devices-some-allocated-admin-access",
    ),
    pytest.param(
        [
            claim_c(CLAIM0, [], req(REQ0, CLASS_A, admin=True)),
            claim_c(CLAIM1, [], req(REQ0, CLASS_A, admin=True)),
        ],
        OK_A,
        [TWO_A],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1)], [(REQ0, DRIVER_A, POOL1, D1)]],
        id="separate-claims-share-device-admin-access",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A)), claim_c(CLAIM1, [], req(REQ0, CLASS_A, admin=True))],
        OK_A,
        [TWO_A],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1)], [(REQ0, DRIVER_A, POOL1, D1)]],
        id="admin-access-claims-device-allocating-for-non-admin-access",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, admin=True))],
        OK_A,
        [ONE_A],
        allocated_devices(A1D, (DRIVER_A, POOL1, D2)),
        [[(REQ0, DRIVER_A, POOL1, D1)]],
        id="admin-access-enabled",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_B)))],
        OK_AB,
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, []), slice_("slice-2", NODE1, POOL2, DRIVER_B, [D1])],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_B, POOL2, D1)]],
        id="all-devices-slice-without-devices-prioritized-list",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_B)))],
        OK_AB,
        [slice_("slice-2", NODE1, POOL2, DRIVER_B, [D1])],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_B, POOL2, D1)]],
        id="all-devices-no-slices-prioritized-list",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_B)))],
        OK_AB,
        [TWO_A, slice_("slice-2", NODE1, POOL2, DRIVER_B, [D1])],
        allocated_devices(A1D),
        [[(f"{REQ0}/{SUB1}", DRIVER_B, POOL2, D1)]],
        id="all-devices-some-allocated-prioritized-list",
    ),
    pytest.param(
        [claim("claim-0", exact(REQ0, CLASS_A))],
        OK_A,
        [slice_devs("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A, [dev(D1)])],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1)]],
        id="network-attached-device",
    ),
    pytest.param(
        [claim("claim-0", exact(REQ0, CLASS_A))],
        OK_A,
        [slice_devs("slice-1", label_selector("region", "region-2"), POOL1, DRIVER_A, [dev(D1)])],
        [],
        None,
        id="unsuccessful-allocation-network-attached-device",
    ),
    pytest.param(
        [claim("claim-0", exact(REQ0, CLASS_A, 4))],
        OK_A,
        [
            slice_devs("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A, [dev(D1)]),
            slice_devs("slice-1", "all", "pool-2", DRIVER_A, [dev(D1)]),
            slice_devs("slice-1", label_selector("planet", "earth"), "pool-3", DRIVER_A, [dev(D1)]),
            slice_devs("slice-1", NODE1, "pool-4", DRIVER_A, [dev(D1)]),
        ],
        [],
        [
            [
                (REQ0, DRIVER_A, POOL1, D1),
                (REQ0, DRIVER_A, POOL2, D1),
                (REQ0, DRIVER_A, "pool-3", D1),
                (REQ0, DRIVER_A, "pool-4", D1),
            ]
        ],
        id="many-network-attached-devices",
    ),
    pytest.param(
        [claim("claim-0", exact(REQ0, CLASS_A, 2))],
        OK_A,
        [
            slice_devs("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A, [dev(D1)]),
            slice_devs("slice-1", NODE1, POOL2, DRIVER_A, [dev(D1)]),
        ],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (REQ0, DRIVER_A, POOL2, D1)]],
        id="local-and-network-attached-devices",
    ),
    pytest.param(
        [claim(CLAIM0, exact(REQ0, CLASS_A)), claim(CLAIM0, exact(REQ0, CLASS_B))],
        OK_AB,
        [TWO_A, ONE_B],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1)], [(REQ0, DRIVER_B, POOL1, D1)]],
        id="several-different-drivers",
    ),
    pytest.param(
        [claim(CLAIM0, exact(REQ0, CLASS_A))],
        OK_A,
        [ONE_A],
        allocated_devices(A1D, (DRIVER_A, POOL1, D2)),
        None,
        id="already-allocated-devices",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [match(INT_ATTR), match(VERSION_ATTR), match(STRING_ATTR), match(BOOL_ATTR)],
                req(REQ0, CLASS_A),
                req(REQ1, CLASS_A),
            )
        ],
        OK_A,
        [slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [dev(D1, None, ALL_ATTRS), dev(D2, None, ALL_ATTRS)])],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (REQ1, DRIVER_A, POOL1, D2)]],
        id="with-constraint",
    ),
    pytest.param(
        [claim_c(CLAIM0, [match(NON_EXISTENT_ATTR)], req(REQ0, CLASS_A))],
        OK_A,
        [ONE_A],
        [],
        None,
        id="with-constraint-non-existent-attribute",
    ),
    pytest.param(
        [claim_c(CLAIM0, [match(INT_ATTR)], req(REQ0, CLASS_A, 2))],
        OK_AB,
        [two_with("numa", {"int": 1}, {"int": 2})],
        [],
        None,
        id="with-constraint-not-matching-int-attribute",
    ),
    pytest.param(
        [claim_c(CLAIM0, [match(STRING_ATTR)], req(REQ0, CLASS_A, 2))],
        OK_AB,
        [
            two_with(
                "stringAttribute", {"string": "stringAttributeValue"}, {"string": "stringAttributeValue2"}
            )
        ],
        [],
        None,
        id="with-constraint-not-matching-string-attribute",
    ),
    pytest.param(
        [claim_c(CLAIM0, [match(BOOL_ATTR)], req(REQ0, CLASS_A, 2))],
        OK_AB,
        [two_with("boolAttribute", {"bool": True}, {"bool": False})],
        [],
        None,
        id="with-constraint-not-matching-bool-attribute",
    ),
    pytest.param(
        [claim_c(CLAIM0, [match(VERSION_ATTR)], req(REQ0, CLASS_A, 2))],
        OK_AB,
        [two_with("driverVersion", {"version": "1.0.0"}, {"version": "2.0.0"})],
        [],
        None,
        id="with-constraint-not-matching-version-attribute",
    ),
    pytest.param(
        [claim_c(CLAIM0, [match(VERSION_ATTR, REQ0)], req(REQ0, CLASS_A), req(REQ1, CLASS_A))],
        OK_AB,
        [two_with("driverVersion", {"version": "1.0.0"}, {"version": "2.0.0"})],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (REQ1, DRIVER_A, POOL1, D2)]],
        id="with-constraint-for-request",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [match(VERSION_ATTR, REQ0), match(STRING_ATTR)],
                req(REQ0, CLASS_A),
                req(REQ1, CLASS_A),
            )
        ],
        OK_AB,
        [
            slice_devs(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                [
                    dev(
                        D1, None, {"driverVersion": {"version": "1.0.0"}, "stringAttribute": {"string": "a"}}
                    ),
                    dev(
                        D2, None, {"driverVersion": {"version": "2.0.0"}, "stringAttribute": {"string": "b"}}
                    ),
                    dev(
                        D3, None, {"driverVersion": {"version": "3.0.0"}, "stringAttribute": {"string": "b"}}
                    ),
                ],
            )
        ],
        [],
        [[(REQ0, DRIVER_A, POOL1, D2), (REQ1, DRIVER_A, POOL1, D3)]],
        id="with-constraint-for-request-retry",
    ),
    pytest.param(
        [claim(CLAIM0, exact(REQ0, CLASS_A))],
        [class_with_config(CLASS_A, DRIVER_A, "classAttribute")],
        [ONE_A],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1)]],
        id="with-class-device-config",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A), req(REQ1, CLASS_A), req(REQ2, CLASS_B))],
        [
            class_with_config(CLASS_A, DRIVER_A, "classAttribute-A"),
            class_with_config(CLASS_B, DRIVER_B, "classAttribute-B"),
        ],
        [multi_slice("slice-1", NODE1, POOL1, DRIVER_A, 2), slice_("slice-2", NODE1, POOL1, DRIVER_B, [D1])],
        [],
        [[(REQ0, DRIVER_A, POOL1, D0), (REQ1, DRIVER_A, POOL1, D1), (REQ2, DRIVER_B, POOL1, D1)]],
        id="with-class-device-config-with-multiple-request-and-configs",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                req(REQ0, CLASS_A),
                config=[{"opaque": {"driver": DRIVER_A, "parameters": {"deviceAttribute": "x"}}}],
            )
        ],
        OK_A,
        [ONE_A],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1)]],
        id="claim-with-device-config",
    ),
    pytest.param([claim_c(CLAIM0, [], req(REQ0, CLASS_A, 32))], OK_A, [], [], None, id="many-devices-okay"),
    pytest.param(
        [claim_c(CLAIM0, [], prioritized(REQ0, sub(SUB0, CLASS_B), sub(SUB1, CLASS_A)))],
        OK_AB,
        [ONE_A],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, D1)]],
        id="prioritized-list-first-unavailable",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], prioritized(REQ0, sub(SUB0, CLASS_B, 2), sub(SUB1, CLASS_A, 2)))],
        OK_AB,
        [ONE_A, slice_("slice-2", NODE1, POOL2, DRIVER_B, [D1])],
        [],
        None,
        id="prioritized-list-non-available",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], prioritized(REQ0, sub(SUB0, CLASS_A), sub(SUB1, CLASS_B, 2)))],
        OK_AB,
        [slice_devs("slice-1", NODE1, POOL1, DRIVER_B, [dev(D1, None, {}), dev(D2, None, {})])],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_B, POOL1, D1), (f"{REQ0}/{SUB1}", DRIVER_B, POOL1, D2)]],
        id="prioritized-list-device-config",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], prioritized(REQ0, sub(SUB0, CLASS_A, 2), sub(SUB1, CLASS_B, 2)))],
        [class_with_config(CLASS_A, DRIVER_A, "foo"), class_with_config(CLASS_B, DRIVER_B, "bar")],
        [
            slice_devs("slice-1", NODE1, POOL1, DRIVER_B, [dev(D1), dev(D2)]),
            slice_devs("slice-2", NODE1, POOL2, DRIVER_A, [dev(D3)]),
        ],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_B, POOL1, D1), (f"{REQ0}/{SUB1}", DRIVER_B, POOL1, D2)]],
        id="prioritized-list-class-config",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                req(REQ0, CLASS_A, 1, mem_sel("1Gi")),
                prioritized(
                    REQ1, sub(SUB0, CLASS_A, 1, mem_sel("4Gi")), sub(SUB1, CLASS_A, 2, mem_sel("2Gi"))
                ),
            )
        ],
        OK_A,
        [
            slice_devs(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                [dev(D1, {MEM: "2Gi"}), dev(D2, {MEM: "2Gi"}), dev(D3, {MEM: "1Gi"})],
            )
        ],
        [],
        [
            [
                (REQ0, DRIVER_A, POOL1, D3),
                (f"{REQ1}/{SUB1}", DRIVER_A, POOL1, D1),
                (f"{REQ1}/{SUB1}", DRIVER_A, POOL1, D2),
            ]
        ],
        id="prioritized-list-subrequests-with-expressions",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [match(VERSION_ATTR, REQ0, REQ1)],
                req(REQ0, CLASS_A, 1, mem_sel("8Gi")),
                prioritized(
                    REQ1, sub(SUB0, CLASS_A, 1, mem_sel("2Gi")), sub(SUB1, CLASS_A, 1, mem_sel("1Gi"))
                ),
            )
        ],
        OK_A,
        [
            slice_devs(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                [dev(D1, {MEM: "8Gi"}, {"driverVersion": {"version": "1.0.0"}})],
            ),
            slice_devs(
                "slice-2",
                NODE1,
                POOL2,
                DRIVER_A,
                [
                    dev(D2, {MEM: "2Gi"}, {"driverVersion": {"version": "2.0.0"}}),
                    dev(D3, {MEM: "1Gi"}, {"driverVersion": {"version": "1.0.0"}}),
                ],
            ),
        ],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (f"{REQ1}/{SUB1}", DRIVER_A, POOL2, D3)]],
        id="prioritized-list-subrequests-with-constraints-ref-parent-request",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [match(VERSION_ATTR, REQ0, f"{REQ1}/{SUB0}")],
                req(REQ0, CLASS_A, 1, mem_sel("8Gi")),
                prioritized(
                    REQ1, sub(SUB0, CLASS_A, 1, mem_sel("2Gi")), sub(SUB1, CLASS_A, 1, mem_sel("1Gi"))
                ),
            )
        ],
        OK_A,
        [
            slice_devs(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                [dev(D1, {MEM: "8Gi"}, {"driverVersion": {"version": "1.0.0"}})],
            ),
            slice_devs(
                "slice-2",
                NODE1,
                POOL2,
                DRIVER_A,
                [dev(D2, {MEM: "2Gi"}, {"driverVersion": {"version": "2.0.0"}})],
            ),
        ],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (f"{REQ1}/{SUB1}", DRIVER_A, POOL2, D2)]],
        id="prioritized-list-subrequests-with-constraints-ref-sub-request",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_A)))],
        OK_A,
        [TWO_A],
        allocated_devices(A1D),
        [[(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, D2)]],
        id="prioritized-list-subrequests-with-allocation-mode-all",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                req(REQ0, CLASS_A),
                prioritized(REQ1, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_A)),
            )
        ],
        OK_A,
        [TWO_A],
        [],
        [[(REQ0, DRIVER_A, POOL1, D1), (f"{REQ1}/{SUB1}", DRIVER_A, POOL1, D2)]],
        id="prioritized-list-allocation-mode-all-multiple-requests",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                req(REQ1, CLASS_A, 1, mem_sel("8Gi")),
                prioritized(
                    REQ0, sub(SUB0, CLASS_A, 1, mem_sel("8Gi")), sub(SUB1, CLASS_A, 1, mem_sel("4Gi"))
                ),
            )
        ],
        OK_A,
        [
            slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [dev(D1, {MEM: "8Gi"}, {})]),
            slice_devs("slice-2", NODE1, POOL2, DRIVER_A, [dev(D2, {MEM: "4Gi"}, {})]),
        ],
        [],
        [[(REQ1, DRIVER_A, POOL1, D1), (f"{REQ0}/{SUB1}", DRIVER_A, POOL2, D2)]],
        id="prioritized-list-multi-request",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                prioritized(
                    REQ0, sub(SUB0, CLASS_A, 1, mem_sel("8Gi")), sub(SUB1, CLASS_A, 1, mem_sel("4Gi"))
                ),
                req(REQ1, CLASS_A, 1, mem_sel("8Gi")),
            )
        ],
        OK_A,
        [
            slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [dev(D1, {MEM: "8Gi"}, {})]),
            slice_devs("slice-2", NODE1, POOL2, DRIVER_A, [dev(D2, {MEM: "4Gi"}, {})]),
        ],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_A, POOL2, D2), (REQ1, DRIVER_A, POOL1, D1)]],
        id="prioritized-list-with-backtracking",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], prioritized(REQ0, sub(SUB0, CLASS_B, 500), sub(SUB1, CLASS_A)))],
        OK_AB,
        [ONE_A],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, D1)]],
        id="prioritized-list-too-many-in-first-subrequest",
    ),
]


@pytest.mark.parametrize("dialect", [pytest.param(V134, id="v1.34"), pytest.param(V135, id="v1.35")])
@pytest.mark.parametrize(("claims", "classes", "slices", "allocated", "expected"), MORE_CASES)
def test_allocate_more(
    claims: list[tuple[str, Obj]],
    classes: list[Obj],
    slices: list[Obj],
    allocated: list[Obj],
    expected: Result,
    dialect: Dialect,
) -> None:
    assert _allocate(claims, classes, slices, allocated, dialect) == expected


NO_SEL = claim_c(CLAIM0, [], {"name": REQ0, "exactly": {"deviceClassName": CLASS_A, "selectors": [{}]}})
MORE_ERRORS: list[Any] = [
    pytest.param(
        [claim_c(CLAIM0, [match(INT_ATTR)], req(REQ0, CLASS_A, mode="All"))],
        OK_AB,
        [two_with("numa", {"int": 1}, {"int": 2})],
        "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint "
        "would not be satisfied",
        id="with-constraint-not-matching-int-attribute-all-devices",
    ),
    pytest.param(
        [NO_SEL], OK_A, [ONE_A], "CEL expression empty (unsupported selector type?)", id="unknown-selector"
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, mode="future-mode"))],
        OK_A,
        [ONE_A],
        "unsupported count mode future-mode",
        id="unknown-allocation-mode",
    ),
    pytest.param(
        [claim_c(CLAIM0, [{}], req(REQ0, CLASS_A))],
        OK_A,
        [ONE_A],
        "empty constraint (unsupported constraint type?)",
        id="unknown-constraint",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, 1, cel("noSuchVar")))],
        OK_A,
        [ONE_A],
        "undeclared reference",
        id="invalid-CEL-one-device",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A))],
        [{"metadata": {"name": CLASS_A}, "spec": {"selectors": [cel("noSuchVar")]}}],
        [ONE_A],
        "undeclared reference",
        id="invalid-CEL-one-device-class",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, 1, cel("noSuchVar"), mode="All"))],
        OK_A,
        [ONE_A],
        "undeclared reference",
        id="invalid-CEL-all-devices",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, 500))],
        OK_A,
        [],
        "exceeds the claim limit",
        id="too-many-devices-single-request",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, 32), req(REQ1, CLASS_A))],
        OK_A,
        [multi_slice("slice-1", NODE1, POOL1, DRIVER_A, 33)],
        "exceeds the claim limit",
        id="too-many-devices-total",
    ),
]


@pytest.mark.parametrize("dialect", [pytest.param(V134, id="v1.34"), pytest.param(V135, id="v1.35")])
@pytest.mark.parametrize(("claims", "classes", "slices", "error"), MORE_ERRORS)
def test_allocate_more_errors(
    claims: list[tuple[str, Obj]], classes: list[Obj], slices: list[Obj], error: str, dialect: Dialect
) -> None:
    with pytest.raises(AllocationError) as e:
        _allocate(claims, classes, slices, [], dialect)
    assert error in str(e.value)


def test_invalid_cel_message() -> None:
    # isSelectable: "class %s: selector #%d: CEL compile error: %w" around compile.go's
    # "compilation failed: " + cel-go's issues display (location, source line, dotted caret).
    with pytest.raises(AllocationError) as e:
        _allocate(
            [claim_c(CLAIM0, [], req(REQ0, CLASS_A))],
            [{"metadata": {"name": CLASS_A}, "spec": {"selectors": [cel("noSuchVar")]}}],
            [ONE_A],
            [],
            V134,
        )
    assert str(e.value) == (
        "class class-a: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:1: "
        "undeclared reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^"
    )


# ---------------------------------------------------------------- CEL evaluator
# Port of the scalar-attribute cases of staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go
# (TestCEL). Skipped: cost expectations (Go-only), list-type attributes and `includes` (DRAListTypeAttributes,
# not in v1.34), allowMultipleAllocations (DRAConsumableCapacity, off), syntax/type compile errors (the
# apiserver rejects such expressions at admission, so snapshots never hold them), "expensive" (cost limit).
EX = "dra.example.com"
CEL_CASES: list[Any] = [
    pytest.param("true", "", {}, {}, True, id="true"),
    pytest.param("false", "", {}, {}, False, id="false"),
    pytest.param(
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        "",
        {},
        {},
        "no such key: noSuchAttr",
        id="runtime-error-lookup-identifier",
    ),
    pytest.param(
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        "",
        {},
        {},
        "no such key: noSuchAttr",
        id="runtime-error-lookup-map",
    ),
    pytest.param('"no-such-domain" in device.attributes', "", {}, {}, False, id="domain-check-negative"),
    pytest.param(
        f'"{EX}" in device.attributes',
        "",
        {f"{EX}/something": {"bool": True}},
        {},
        True,
        id="domain-check-positive",
    ),
    pytest.param('device.driver == ""', "", {}, {}, True, id="empty-driver-name"),
    pytest.param(f'device.driver == "{EX}"', EX, {}, {}, True, id="real-driver-name"),
    pytest.param(
        f'device.attributes["{EX}"].name', EX, {"name": {"bool": True}}, {}, True, id="driver-name-qualifier"
    ),
    pytest.param(
        f'device.attributes["{EX}"]["name"]',
        EX,
        {"name": {"bool": True}},
        {},
        True,
        id="driver-name-qualifier-map-lookup",
    ),
    pytest.param(
        'device.attributes["other.example.com"].name',
        EX,
        {"other.example.com/name": {"bool": True}},
        {},
        True,
        id="qualified-attribute-name",
    ),
    pytest.param(f'device.attributes["{EX}"].name', EX, {"name": {"bool": True}}, {}, True, id="bool"),
    pytest.param(f'device.attributes["{EX}"].name > 0', EX, {"name": {"int": 1}}, {}, True, id="int"),
    pytest.param(
        f'device.attributes["{EX}"].name == "fish"', EX, {"name": {"string": "fish"}}, {}, True, id="string"
    ),
    pytest.param(
        f'device.attributes["{EX}"].name.exists(x, x > 0)',
        EX,
        {"name": {"int": 1}},
        {},
        "got 'types.Int', expected iterable type",
        id="macro-exists-on-int",
    ),
    pytest.param(
        f'device.attributes["{EX}"].name.exists(x, x == true)',
        EX,
        {"name": {"bool": True}},
        {},
        "got 'types.Bool', expected iterable type",
        id="macro-exists-on-bool",
    ),
    pytest.param(
        f'device.attributes["{EX}"].name.exists(x, x == "fish")',
        EX,
        {"name": {"string": "fish"}},
        {},
        "got 'types.String', expected iterable type",
        id="macro-exists-on-string",
    ),
    pytest.param(
        f'device.attributes["{EX}"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
        EX,
        {"name": {"version": "1.0.0"}},
        {},
        "got 'cel.Semver', expected iterable type",
        id="macro-exists-on-version",
    ),
    pytest.param(
        f'device.attributes["{EX}"].name.isGreaterThan(semver("0.0.1"))',
        EX,
        {"name": {"version": "1.0.0"}},
        {},
        True,
        id="version",
    ),
    pytest.param(
        f'device.capacity["{EX}"].name.isGreaterThan(quantity("1Ki"))',
        EX,
        {},
        {"name": "1Mi"},
        True,
        id="quantity",
    ),
    pytest.param(
        f'"name" in device.capacity["{EX}"] && device.capacity["{EX}"].name.isGreaterThan(quantity("1Ki"))',
        EX,
        {},
        {"name": "1Mi"},
        True,
        id="check-positive",
    ),
    pytest.param(
        f'!("name" in device.capacity["{EX}"]) || device.capacity["{EX}"].name.isGreaterThan(quantity("1Ki"))',
        "",
        {},
        {},
        True,
        id="check-negative",
    ),
    pytest.param(
        f"""
device.capacity["{EX}"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["{EX}"].bool &&
device.attributes["{EX}"].int > 0 &&
device.attributes["{EX}"].string == "fish" &&
device.attributes["{EX}"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["{EX}"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["{EX}"]["bool"] &&
device.attributes["{EX}"]["int"] > 0 &&
device.attributes["{EX}"]["string"] == "fish" &&
device.attributes["{EX}"]["version"].isGreaterThan(semver("0.0.1"))
""",
        EX,
        {
            "bool": {"bool": True},
            "int": {"int": 1},
            "string": {"string": "fish"},
            "version": {"version": "1.0.0"},
        },
        {"quantity": "1Mi"},
        True,
        id="all",
    ),
    pytest.param(
        f'device.attributes["{EX}"].a && device.attributes["{EX}"].b && device.attributes["{EX}"].c',
        EX,
        {"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}},
        {},
        True,
        id="many",
    ),
    pytest.param(
        f'device.attributes.exists_one(x, x == "{EX}")',
        EX,
        {"services": {"string": "some_example_value"}},
        {},
        True,
        id="check_attribute_domains",
    ),
    pytest.param(
        f'device.attributes["{EX}"].exists_one(x, x == "services")',
        EX,
        {"services": {"string": "some_example_value"}},
        {},
        True,
        id="check_attribute_ids",
    ),
    pytest.param(
        f'device.attributes["{EX}"].services.matches("[^a]?sym")',
        EX,
        {"services": {"string": "asymetric"}},
        {},
        True,
        id="regexp_attribute",
    ),
    pytest.param(
        f'device.capacity.exists_one(x, x == "{EX}")',
        EX,
        {},
        {"memory": "1Mi"},
        True,
        id="check_capacity_domains",
    ),
    pytest.param(
        f'device.capacity["{EX}"].exists_one(x, x == "memory")',
        EX,
        {},
        {"memory": "1Mi"},
        True,
        id="check_capacity_ids",
    ),
]


@pytest.mark.parametrize(("expression", "driver", "attributes", "capacity", "expected"), CEL_CASES)
def test_cel(
    expression: str, driver: str, attributes: Obj, capacity: dict[str, str], expected: bool | str
) -> None:
    from kdiagnose.scheduler.plugins.dynamicresources.allocator import Device
    from kdiagnose.scheduler.plugins.dynamicresources.cel import CelRuntimeError, compile_expression

    raw: Obj = {
        "name": "d",
        "attributes": attributes,
        "capacity": {k: {"value": v} for k, v in capacity.items()},
    }
    device = Device("d", raw, False, False)
    program = compile_expression(expression)
    if isinstance(expected, str):
        with pytest.raises(CelRuntimeError) as e:
            program.evaluate(device.env(driver))
        assert expected in str(e.value)
    else:
        assert program.evaluate(device.env(driver)) is expected


def gen(name: str, generation: str, **extra: Obj) -> Obj:
    return dev(name, None, {"generation": {"string": generation}, **extra})


GEN_V6 = cel(f'device.attributes["{DRIVER_A}"].generation == "v6"')
GEN_V5 = cel(f'device.attributes["{DRIVER_A}"].generation == "v5"')
MAX = 32  # resourceapi.AllocationResultsMaxSize


def many(ref: str, driver: str, pool: str, n: int, start: int = 0) -> list[tuple[str, str, str, str]]:
    """multipleDeviceAllocationResults(ref, driver, pool, n, start)."""
    return [(ref, driver, pool, f"device-{i}") for i in range(start, start + n)]


LATER_CASES: list[Any] = [
    pytest.param(
        [claim_c(CLAIM0, [], prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_A)))],
        OK_A,
        [TWO_A],
        allocated_devices((DRIVER_A, POOL1, D2)),
        [[(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, D1)]],
        id="prioritized-list-allocation-mode-all",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                prioritized(
                    REQ0, sub(SUB0, CLASS_A, 0, GEN_V6, mode="All"), sub(SUB1, CLASS_A, 0, GEN_V5, mode="All")
                ),
            )
        ],
        OK_A,
        [slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [gen(D1, "v5")])],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, D1)]],
        id="prioritized-list-allocation-mode-all-with-selectors",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                prioritized(
                    REQ0, sub(SUB0, CLASS_A, 0, GEN_V6, mode="All"), sub(SUB1, CLASS_A, 0, GEN_V5, mode="All")
                ),
            )
        ],
        OK_A,
        [
            slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [gen(D1, "v5")]),
            slice_devs("slice-2", NODE1, POOL2, DRIVER_A, [gen(D1, "v5")]),
        ],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, D1), (f"{REQ0}/{SUB1}", DRIVER_A, POOL2, D1)]],
        id="prioritized-list-allocation-mode-all-with-selectors-multiple-pools",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                prioritized(
                    REQ0, sub(SUB0, CLASS_A, 0, GEN_V6, mode="All"), sub(SUB1, CLASS_A, 0, GEN_V5, mode="All")
                ),
            )
        ],
        OK_A,
        [
            slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [gen(D1, "v5")]),
            slice_devs("slice-2", "node-2", POOL2, DRIVER_A, [gen(D1, "v5"), gen(D2, "v6")]),
        ],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, D1)]],
        id="prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                prioritized(
                    REQ0, sub(SUB0, CLASS_A, 0, GEN_V6, mode="All"), sub(SUB1, CLASS_A, 0, GEN_V5, mode="All")
                ),
            )
        ],
        [
            {
                "metadata": {"name": CLASS_A},
                "spec": {
                    "selectors": [
                        cel(f'device.driver == "{DRIVER_A}" && device.attributes["{DRIVER_A}"].selected')
                    ]
                },
            }
        ],
        [
            slice_devs(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                [
                    gen(D1, "v6", selected={"bool": False}),
                    gen(D2, "v5", selected={"bool": False}),
                    gen(D3, "v5", selected={"bool": True}),
                ],
            )
        ],
        [],
        [[(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, D3)]],
        id="prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, MAX))],
        OK_A,
        [multi_slice("slice-1", NODE1, POOL1, DRIVER_A, MAX)],
        [],
        [many(REQ0, DRIVER_A, POOL1, MAX)],
        id="max-number-devices",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                prioritized(REQ0, sub(SUB0, CLASS_A, MAX), sub(SUB1, CLASS_A, MAX // 2)),
                prioritized(REQ1, sub(SUB0, CLASS_A, MAX), sub(SUB1, CLASS_A, MAX // 2)),
            )
        ],
        OK_A,
        [multi_slice("slice-1", NODE1, POOL1, DRIVER_A, MAX * 2)],
        [],
        [
            many(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, MAX // 2)
            + many(f"{REQ1}/{SUB1}", DRIVER_A, POOL1, MAX // 2, MAX // 2)
        ],
        id="prioritized-list-max-allocation-limit-request",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_A, 2)),
                req(REQ1, CLASS_B, 2),
            )
        ],
        OK_AB,
        [
            multi_slice("slice-1", NODE1, POOL1, DRIVER_A, MAX - 1),
            multi_slice("slice-2", NODE1, POOL2, DRIVER_B, 2),
        ],
        [],
        [many(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, 2) + many(REQ1, DRIVER_B, POOL2, 2)],
        id="prioritized-list-max-allocation-allocation-mode-all",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A))],
        OK_A,
        [
            slice_devs(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                [
                    {
                        "name": D1,
                        "bindingConditions": ["IsPrepare"],
                        "bindingFailureConditions": ["BindingFailed"],
                    }
                ],
            )
        ],
        [],
        None,
        id="binding-conditions-without-feature-gate",
    ),
]


@pytest.mark.parametrize("dialect", [pytest.param(V134, id="v1.34"), pytest.param(V135, id="v1.35")])
@pytest.mark.parametrize(("claims", "classes", "slices", "allocated", "expected"), LATER_CASES)
def test_allocate_later(
    claims: list[tuple[str, Obj]],
    classes: list[Obj],
    slices: list[Obj],
    allocated: list[Obj],
    expected: Result,
    dialect: Dialect,
) -> None:
    assert _allocate(claims, classes, slices, allocated, dialect) == expected


RUNTIME_ERRORS: list[Any] = [
    # isSelectable: a CEL runtime error aborts the whole allocation ("claim %s: selector #%d: CEL runtime
    # error: %w"); the device without the attribute is examined first.
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A, 1, cel(f'device.attributes["{DRIVER_A}"].model == "x"')))],
        OK_A,
        [slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [dev(D1), dev(D2, None, {"model": {"string": "x"}})])],
        "claim claim-0: selector #0: CEL runtime error: no such key: model",
        id="missing attribute key is a runtime error",
    ),
    pytest.param(
        [
            claim_c(
                CLAIM0,
                [],
                req(REQ0, CLASS_A, 1, cel(f'device.attributes["{DRIVER_A}"].model.exists(x, x == 1)')),
            )
        ],
        OK_A,
        [slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [dev(D1, None, {"model": {"int": 1}})])],
        "claim claim-0: selector #0: CEL runtime error: got 'types.Int', expected iterable type",
        id="macro over a scalar attribute is a runtime error",
    ),
    pytest.param(
        [claim_c(CLAIM0, [], req(REQ0, CLASS_A))],
        [
            {
                "metadata": {"name": CLASS_A},
                "spec": {
                    "selectors": [cel('device.capacity["driver-a"].memory.isGreaterThan(quantity("1Gi"))')]
                },
            }
        ],
        [slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [dev(D1)])],
        "class class-a: selector #0: CEL runtime error: no such key: memory",
        id="class selector runtime error names the class",
    ),
]


@pytest.mark.parametrize(("claims", "classes", "slices", "error"), RUNTIME_ERRORS)
def test_allocate_runtime_errors(
    claims: list[tuple[str, Obj]], classes: list[Obj], slices: list[Obj], error: str
) -> None:
    with pytest.raises(AllocationError) as e:
        _allocate(claims, classes, slices, [], V134)
    assert str(e.value) == error


def test_all_devices_with_request_selector() -> None:
    # allocationMode All counts only the devices that pass the class AND the request selectors.
    slices = [slice_devs("slice-1", NODE1, POOL1, DRIVER_A, [gen(D1, "v5"), gen(D2, "v6"), gen(D3, "v5")])]
    got = _allocate([claim_c(CLAIM0, [], req(REQ0, CLASS_A, 0, GEN_V5, mode="All"))], OK_A, slices, [], V134)
    assert got == [[(REQ0, DRIVER_A, POOL1, D1), (REQ0, DRIVER_A, POOL1, D3)]]


def test_exact_count_more_than_available() -> None:
    got = _allocate([claim_c(CLAIM0, [], req(REQ0, CLASS_A, 3))], OK_A, [TWO_A], [], V134)
    assert got is None


# dynamic-resource-allocation cel/compile_test.go, the allow_multiple_allocations* cases: the device type's
# multiAllocVar (ptr.Deref: unset is false). The scheduler compiles stored expressions, which declare the
# field from v1.34 whatever DRAConsumableCapacity says; the device types of v1.31-v1.33 do not have it
# (compile.go fieldsV131), like upstream's allow_multiple_allocations_disabled case.
ALLOW_MULTIPLE_CASES = [
    pytest.param("device.allowMultipleAllocations == true", True, True, id="allow_multiple_allocations"),
    pytest.param(
        "device.allowMultipleAllocations == false", None, True, id="allow_multiple_allocations_default"
    ),
    pytest.param(
        "device.allowMultipleAllocations == false", False, True, id="allow_multiple_allocations_false"
    ),
    pytest.param("device.allowMultipleAllocations", False, False, id="allow_multiple_allocations_bare"),
]


@pytest.mark.parametrize(("expression", "allow", "expected"), ALLOW_MULTIPLE_CASES)
def test_cel_allow_multiple_allocations(expression: str, allow: bool | None, expected: bool) -> None:
    from kdiagnose.scheduler.plugins.dynamicresources.allocator import Device
    from kdiagnose.scheduler.plugins.dynamicresources.cel import compile_expression

    raw: Obj = {"name": "d"} if allow is None else {"name": "d", "allowMultipleAllocations": allow}
    device = Device("d", raw, False, False, allow_multiple=raw.get("allowMultipleAllocations") is True)
    assert compile_expression(expression).evaluate(device.env("dra.example.com")) is expected


@pytest.mark.parametrize(
    ("expression", "fields", "message"),
    [
        pytest.param(
            "device.allowMultipleAllocations == false",
            "v131",
            "ERROR: <input>:1:7: undefined field 'allowMultipleAllocations'\n"
            " | device.allowMultipleAllocations == false\n | ......^",
            id="allow_multiple_allocations_disabled",
        ),
        pytest.param(
            # Recorded by kube-scheduler v1.37.2 (features/dra-cel-allow-multiple-allocations); the other
            # texts are what cel-go (dynamic-resource-allocation v0.37.2 CompileCELExpression) returns.
            "device.allowMultipleAllocation",
            "v134",
            "ERROR: <input>:1:7: undefined field 'allowMultipleAllocation'\n | device.allowMultipleAllocation\n | ......^",
            id="misspelt_field",
        ),
        pytest.param(
            'device.driver == "x" || device.model == "a"',
            "v134",
            "ERROR: <input>:1:31: undefined field 'model'\n"
            ' | device.driver == "x" || device.model == "a"\n | ..............................^',
            id="second_selection",
        ),
        pytest.param(
            "device.a || device.b || foo",
            "v134",
            "ERROR: <input>:1:7: undefined field 'a'\n | device.a || device.b || foo\n | ......^\n"
            "ERROR: <input>:1:19: undefined field 'b'\n | device.a || device.b || foo\n | ..................^\n"
            "ERROR: <input>:1:25: undeclared reference to 'foo' (in container '')\n"
            " | device.a || device.b || foo\n | ........................^",
            id="fields_and_variable_in_source_order",
        ),
    ],
)
def test_cel_undefined_device_field(expression: str, fields: str, message: str) -> None:
    from kdiagnose.scheduler.plugins.dynamicresources.cel import (
        DEVICE_FIELDS_V131,
        DEVICE_FIELDS_V134,
        CelCompileError,
        compile_expression,
    )

    with pytest.raises(CelCompileError) as e:
        compile_expression(expression, DEVICE_FIELDS_V131 if fields == "v131" else DEVICE_FIELDS_V134)
    assert str(e.value) == "compilation failed: " + message
