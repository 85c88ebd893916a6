"""Stale nominatedNodeName (live mode): another pod's nomination holds the node the pod would fit."""

from __future__ import annotations

from typing import Any

from kdiagnose.load.raw import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.remedies.engine import compute_remedies
from kdiagnose.results import Remedy
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(name: str, cpu: str, *, node: str = "", nominated: str = "", priority: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "priority": priority,
        "containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node:
        spec["nodeName"] = node
    status: dict[str, Any] = {"phase": "Running" if node else "Pending"}
    if nominated:
        status["nominatedNodeName"] = nominated
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
        "status": status,
    }


def _remedies(hi_cpu: str) -> tuple[list[Remedy], list[str]]:
    # n1: 4 cpu, 3 requested by a running pod: 1 free. "batch-hi" (priority 1000) is nominated to n1.
    objs = [
        _node("n1"),
        _pod("db", "3", node="n1"),
        _pod("batch-hi", hi_cpu, nominated="n1", priority=1000),
        _pod("web", "1"),
    ]
    snap = build_snapshot([RawObject(o, "cluster.yaml") for o in objs], dialect_for(None))
    sched = Scheduler(snap, nominated=True)
    d = sched.diagnose(next(p for p in snap.pending if p.name == "web"))
    assert not d.scheduled
    return compute_remedies(snap, sched, d)


def test_a_nomination_that_no_longer_fits_is_stale_and_cleared() -> None:
    # batch-hi wants 3 cpu but n1 has 1 free: its nomination is stale, and it is what blocks web's 1 cpu.
    remedies, _ = _remedies("3")
    (first,) = [r for r in remedies if r.kind == "stale-nomination"]
    assert first.unblocks == ["n1"] and first.safety == "safe"
    assert first.commands == [
        "kubectl patch pod/batch-hi -n default --subresource=status --type=merge -p "
        '\'{"status":{"nominatedNodeName":null}}\''
    ]


def test_a_nomination_that_still_fits_is_explained_not_removed() -> None:
    # batch-hi wants 1 cpu: it fits n1's 1 free cpu, so n1 is rightly held for it.
    remedies, notes = _remedies("1")
    assert [r for r in remedies if r.kind == "stale-nomination"] == []
    assert any(n.startswith("nominated: n1 is held for default/batch-hi") for n in notes)
