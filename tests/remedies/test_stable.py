"""Stable remedies: the same cluster in any document order yields identical remedies and notes.

The snapshot is canonical (informer order); every remedy tie-break is a rule (README "How remedies are
ranked"): these permutations would expose one that still followed input order.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.remedies.engine import compute_remedies
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for
from tests.remedies.helpers import FIXTURES

SCENARIOS = [
    "golden/seed-hello-web.yaml",
    "golden/cluster-eks-three-nodegroups.yaml",
    "remedies/arch-gpu.yaml",
    "remedies/pool-selector.yaml",
    "remedies/cordoned-local-pv.yaml",
    "remedies/misspelled-references.yaml",
    "remedies/host-port-held.yaml",
    "remedies/terminating-holders.yaml",
    "remedies/spread-zones.yaml",
    "remedies/anti-affinity-replicas.yaml",
    "remedies/no-pool-fits.yaml",
    "remedies/runtimeclass-limitrange.yaml",
]


def _all_remedies(objects: list[Any]) -> dict[str, Any]:
    snap = build_snapshot(objects, dialect_for(None))
    sched = Scheduler(snap)
    out: dict[str, Any] = {}
    for pod in sorted(snap.pending, key=lambda p: p.key):
        d = sched.diagnose(pod)
        if d.scheduled:
            continue
        found, notes = compute_remedies(snap, sched, d)
        out[pod.key] = ([dataclasses.asdict(r) for r in found], notes)
    return out


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_remedies_do_not_depend_on_document_order(scenario: str) -> None:
    loaded = load_paths([str(FIXTURES / scenario)])
    objects = list(loaded.objects)
    want = _all_remedies(objects)
    assert want
    rng = random.Random(13)
    for _ in range(5):
        shuffled = objects[:]
        rng.shuffle(shuffled)
        assert _all_remedies(shuffled) == want
