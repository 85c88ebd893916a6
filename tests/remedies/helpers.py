"""Load a scenario, diagnose one pending pod, compute its remedies."""

from __future__ import annotations

from pathlib import Path

from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.pools import PoolSpec
from kdiagnose.remedies.engine import compute_remedies
from kdiagnose.results import Remedy
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def remedies_for(
    scenario: str, pod: str, pools: list[PoolSpec] | None = None
) -> tuple[list[Remedy], list[str]]:
    loaded = load_paths([str(FIXTURES / scenario)])
    snap = build_snapshot(loaded.objects, dialect_for(None), list_kinds=loaded.list_kinds)
    sched = Scheduler(snap)
    target = next(p for p in snap.pending if p.key == pod)
    d = sched.diagnose(target)
    assert not d.scheduled
    return compute_remedies(snap, sched, d, pools=pools)


def by_kind(remedies: list[Remedy], kind: str) -> list[Remedy]:
    return [r for r in remedies if r.kind == kind]
