"""Small varied clusters from benchmarks/generate.py (the issue #17 mass-pending shape) for the tests that
compare kdiagnose's fast paths with the plain ones: pools, zones, taints, distinct pending pods with varied
requests, node selectors, required anti-affinity and zone spread."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.versions import dialect_for

GENERATE = Path(__file__).resolve().parent.parent / "benchmarks" / "generate.py"


@cache
def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kdiagnose_bench_generate", GENERATE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def varied_items(nodes: int, pods_per_node: int, pending: int, seed: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = _generator().generate(nodes, pods_per_node, pending, seed, 0, True)["items"]
    return items


def varied_snapshot(
    nodes: int = 60, pods_per_node: int = 6, pending: int = 40, seed: int = 1, version: str = "v1.34.1"
) -> Snapshot:
    objs = [RawObject(o, "varied.json") for o in varied_items(nodes, pods_per_node, pending, seed)]
    return build_snapshot(objs, dialect_for(version))
