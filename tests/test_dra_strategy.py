"""The fields a v1.34/v1.35 API server drops from DRA objects created with their gates off
(kdiagnose/load/dra_strategy.py, pkg/registry/resource/*/strategy.go), and what that changes in a replay."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kdiagnose.load.dra_strategy import drop_disabled_dra_fields
from kdiagnose.versions import dialect_for

Obj = dict[str, Any]

SLICE: Obj = {
    "kind": "ResourceSlice",
    "spec": {
        "driver": "gpu.example.com",
        "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "n1",
        "sharedCounters": [{"name": "mem", "counters": {"memory": {"value": "80Gi"}}}],
        "devices": [
            {
                "name": "g0",
                "allowMultipleAllocations": True,
                "capacity": {"memory": {"value": "40Gi", "requestPolicy": {"default": "1Gi"}}},
                "consumesCounters": [{"counterSet": "mem", "counters": {"memory": {"value": "40Gi"}}}],
                "bindingConditions": ["ready"],
                "bindingFailureConditions": ["failed"],
                "bindsToNode": True,
                "taints": [{"key": "k", "effect": "NoSchedule"}],
            }
        ],
    },
}
CLAIM_SPEC: Obj = {
    "devices": {
        "requests": [
            {
                "name": "r",
                "exactly": {"deviceClassName": "c", "capacity": {"requests": {"memory": "1Gi"}}},
            },
            {
                "name": "f",
                "firstAvailable": [{"name": "a", "deviceClassName": "c", "capacity": {"requests": {}}}],
            },
        ],
        "constraints": [{"requests": ["r"], "distinctAttribute": "x"}],
    }
}


def _objects() -> dict[str, list[Obj]]:
    return {
        "ResourceSlice": [copy.deepcopy(SLICE)],
        "ResourceClaim": [{"kind": "ResourceClaim", "spec": copy.deepcopy(CLAIM_SPEC), "status": {"x": 1}}],
        "ResourceClaimTemplate": [
            {"kind": "ResourceClaimTemplate", "spec": {"spec": copy.deepcopy(CLAIM_SPEC)}}
        ],
    }


@pytest.mark.parametrize("version", ["v1.34.1", "v1.35.8"])
def test_gates_off_drop_their_fields(version: str) -> None:
    objs = _objects()
    drop_disabled_dra_fields(objs, dialect_for(version))
    spec = objs["ResourceSlice"][0]["spec"]
    assert "sharedCounters" not in spec
    dev = spec["devices"][0]
    for field in (
        "allowMultipleAllocations",
        "consumesCounters",
        "bindingConditions",
        "bindingFailureConditions",
        "bindsToNode",
    ):
        assert field not in dev, field
    assert dev["capacity"] == {"memory": {"value": "40Gi"}}
    # Device taints are left: the allocator of these releases ignores them either way.
    assert dev["taints"] == [{"key": "k", "effect": "NoSchedule"}]
    for claim_spec in (objs["ResourceClaim"][0]["spec"], objs["ResourceClaimTemplate"][0]["spec"]["spec"]):
        reqs = claim_spec["devices"]["requests"]
        assert reqs[0]["exactly"] == {"deviceClassName": "c"}
        assert reqs[1]["firstAvailable"] == [{"name": "a", "deviceClassName": "c"}]
        # v1.34's strategy clears a copy of each constraint (range loop): distinctAttribute stays.
        kept = (
            [{"requests": ["r"], "distinctAttribute": "x"}] if version == "v1.34.1" else [{"requests": ["r"]}]
        )
        assert claim_spec["devices"]["constraints"] == kept
    assert objs["ResourceClaim"][0]["status"] == {"x": 1}


@pytest.mark.parametrize("version", ["v1.36.5", "v1.37.2"])
def test_gates_on_keep_everything(version: str) -> None:
    objs = _objects()
    drop_disabled_dra_fields(objs, dialect_for(version))
    assert objs == _objects()


def test_the_input_objects_are_not_changed() -> None:
    objs = _objects()
    originals = {k: list(v) for k, v in objs.items()}
    drop_disabled_dra_fields(objs, dialect_for("v1.35.8"))
    assert originals == _objects()
