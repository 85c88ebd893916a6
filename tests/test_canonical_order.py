"""load/order.py canonical_order: informer key order, and objects sharing a key by (newest resourceVersion,
canonical JSON), for any input order; with no key shared it skips the tie pass (one C-level check), which
must not change the order. build_snapshot's grouping by kind keeps the kinds' first-seen order."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kdiagnose.load.order import canonical_order, meta_key
from kdiagnose.load.raw import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.versions import dialect_for


def _pod(ns: str, name: str, rv: str = "", extra: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": ns, "name": name}
    if rv:
        meta["resourceVersion"] = rv
    return {"kind": "Pod", "metadata": meta, "spec": {"nodeName": "n", "x": extra}}


def _reference(raws: list[RawObject]) -> list[RawObject]:
    def rv(r: RawObject) -> int:
        v = r.obj["metadata"].get("resourceVersion")
        return int(v) if isinstance(v, str) and v.isdigit() else -1

    return sorted(
        raws,
        key=lambda r: (meta_key(r.meta, True), -rv(r), json.dumps(r.obj, sort_keys=True, default=str)),
    )


@pytest.mark.parametrize("shared", [False, True], ids=["unique keys", "shared keys"])
def test_any_input_order_gives_the_informer_order(shared: bool) -> None:
    objs = [_pod(ns, f"p-{i}") for ns in ("a", "a-b", "b") for i in (1, 10, 9, 2)]
    if shared:
        objs += [_pod("a", "p-1", "7", "newer"), _pod("a", "p-1", "", "z"), _pod("b", "p-9", "3", "q")]
    raws = [RawObject(o, "x") for o in objs]
    want = [id(r) for r in _reference(raws)]
    rng = random.Random(7)
    for _ in range(20):
        rng.shuffle(raws)
        assert [id(r) for r in canonical_order(list(raws), namespaced=True)] == want
    keys = [meta_key(r.meta, True) for r in canonical_order(raws, namespaced=True)]
    assert keys == sorted(keys)
    assert (len(set(keys)) < len(keys)) is shared


def test_kinds_are_grouped_in_first_seen_order_and_odd_kinds_counted() -> None:
    node = {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1", "pods": "9"}}}
    objs: list[dict[str, Any]] = [
        {"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "a"}},
        node,
        {"kind": ["not", "a", "string"], "metadata": {"name": "l"}},
        {"kind": 5, "metadata": {"name": "i"}},
        {"metadata": {"name": "none"}},
        {"kind": "Widget", "metadata": {"name": "w"}},
        {"kind": "ConfigMap", "metadata": {"name": "d", "namespace": "a"}},
    ]
    snap = build_snapshot([RawObject(o, "x") for o in objs], dialect_for("v1.34.1"))
    assert dict(snap.skipped) == {"<no kind>": 3, "Widget": 1}
    assert [c["metadata"]["name"] for c in snap.kind("ConfigMap")] == ["c", "d"]
    assert [ni.name for ni in snap.node_infos] == ["n"]
