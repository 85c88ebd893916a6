"""What the API server's create does to resource.k8s.io/v1 objects of a release whose DRA feature gates are
off: the strategies' PrepareForCreate drops the fields of those gates (pkg/registry/resource/resourceslice/
strategy.go dropDisabledFields, pkg/api/resourceclaimspec/util.go DropDisabledFields (v1.35+; in v1.34
pkg/registry/resource/resourceclaim/strategy.go), resourceclaimtemplate/strategy.go, deviceclass/strategy.go).

A dump of a live cluster already holds the objects as stored; a raw manifest (or a golden scenario) does
not, and on a v1.34 or v1.35 cluster a ResourceSlice's `sharedCounters` or a claim's `capacity` request never
reach the scheduler. The fields dropped here are the ones whose absence changes what the allocator does:
- DRAPartitionableDevices (beta/on from v1.36): a slice's `sharedCounters` and `perDeviceNodeSelection`, a
  device's `consumesCounters`, `nodeName`, `nodeSelector`, `allNodes`;
- DRADeviceBindingConditions (beta/on from v1.36): a device's `bindingConditions`,
  `bindingFailureConditions`, `bindsToNode`;
- DRAConsumableCapacity (beta/on from v1.36): a device's `allowMultipleAllocations` and its capacities'
  `requestPolicy`; a claim's (and template's) `capacity` requests and (from v1.35) `distinctAttribute`
  constraints: v1.34's dropDisabledDRAResourceClaimConsumableCapacityFields clears a copy of each
  constraint (`for _, constaint := range ...`), so it keeps them.
The other gated fields (device taints and claim tolerations, a DeviceClass's `extendedResourceName`) are
ignored by the allocator of those releases whether present or not, and are left as they are. The status of
a recorded ResourceClaim is not touched (the scheduler and the controller write it through the status
subresource). Mirrored in the conformance harness (conformance/dra_v1.go dropDisabledFields), which runs
the real strategies.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from kdiagnose.versions import Dialect

__all__ = ["drop_disabled_dra_fields"]

Obj = dict[str, Any]


def _dicts(v: Any) -> Iterable[Obj]:
    return (x for x in v if isinstance(x, dict)) if isinstance(v, list) else ()


def _spec(obj: Obj) -> Obj:
    s = obj.get("spec")
    return s if isinstance(s, dict) else {}


def _slice(obj: Obj, dialect: Dialect) -> None:
    spec = _spec(obj)
    if not dialect.dra_partitionable_devices:
        spec.pop("sharedCounters", None)
        spec.pop("perDeviceNodeSelection", None)
    for dev in _dicts(spec.get("devices")):
        if not dialect.dra_partitionable_devices:
            for f in ("consumesCounters", "nodeName", "nodeSelector", "allNodes"):
                dev.pop(f, None)
        if not dialect.dra_device_binding_conditions:
            for f in ("bindingConditions", "bindingFailureConditions", "bindsToNode"):
                dev.pop(f, None)
        if not dialect.dra_consumable_capacity:
            dev.pop("allowMultipleAllocations", None)
            cap = dev.get("capacity")
            if isinstance(cap, dict):
                for c in cap.values():
                    if isinstance(c, dict):
                        c.pop("requestPolicy", None)


def _claim_spec(spec: Obj, dialect: Dialect) -> None:
    if dialect.dra_consumable_capacity:
        return
    devices = spec.get("devices")
    if not isinstance(devices, dict):
        return
    if dialect.dra_strategy_drops_distinct_attribute:
        for c in _dicts(devices.get("constraints")):
            c.pop("distinctAttribute", None)
    for r in _dicts(devices.get("requests")):
        exactly = r.get("exactly")
        if isinstance(exactly, dict):
            exactly.pop("capacity", None)
        for sub in _dicts(r.get("firstAvailable")):
            sub.pop("capacity", None)


def drop_disabled_dra_fields(by_kind: dict[str, list[Obj]], dialect: Dialect) -> None:
    """Replace the DRA objects of `by_kind` by copies without the fields the release's API server drops on
    create (see the module docstring)."""
    if (
        dialect.dra_partitionable_devices
        and dialect.dra_consumable_capacity
        and (dialect.dra_device_binding_conditions)
    ):
        return
    # Copies: the input objects stay as read (the same dicts may be replayed under another release).
    for kind in ("ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"):
        if kind in by_kind:
            by_kind[kind] = [copy.deepcopy(o) for o in by_kind[kind]]
    for s in by_kind.get("ResourceSlice", []):
        _slice(s, dialect)
    for c in by_kind.get("ResourceClaim", []):
        _claim_spec(_spec(c), dialect)
    for t in by_kind.get("ResourceClaimTemplate", []):
        inner = _spec(t).get("spec")
        if isinstance(inner, dict):
            _claim_spec(inner, dialect)
