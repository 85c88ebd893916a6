"""Remedies for one unschedulable pod: every kind, each proven by a what-if replay, ranked.

Ranking: first what unblocks the pod without changing its requirements (preemption, more capacity, a freed
port, a pool in the volume's zone), then what changes the workload (toleration, affinity, requests).
"""

from __future__ import annotations

from collections.abc import Callable

from kdiagnose.model.pools import PoolSpec
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.remedies import affinity, ports, preemption, resources, scale_pool, toleration, volumes
from kdiagnose.remedies.whatif import Context
from kdiagnose.results import Remedy
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.engine import Scheduler

__all__ = ["RANK", "compute_remedies", "set_pool_specs"]

# Lower first: capacity (no change to the workload), then changes to the workload's requirements.
RANK = {
    "preemption": 0,
    "scale-pool": 1,
    "free-port": 2,
    "volume": 3,
    "toleration": 10,
    "relax-affinity": 11,
    "right-size": 12,
}
_SPECS_KEY = "remedies/pool-specs"

Kind = Callable[[Context], tuple[list[Remedy], list[str]]]


def set_pool_specs(snapshot: Snapshot, specs: list[PoolSpec]) -> None:
    """Pools from `--pools FILE` for this snapshot (kept beside its caches; never a verdict)."""
    snapshot.cache[_SPECS_KEY] = list(specs)


def compute_remedies(
    snapshot: Snapshot, scheduler: Scheduler, diagnosis: Diagnosis, *, pools: list[PoolSpec] | None = None
) -> tuple[list[Remedy], list[str]]:
    """(ranked remedies, notes such as per-pool "why no scale-up") for a pod the replay could not place."""
    if diagnosis.scheduled or not diagnosis.handled or diagnosis.preenqueue is not None:
        return [], []
    ctx = Context(snapshot, scheduler, diagnosis)
    specs = pools if pools is not None else snapshot.cache.get(_SPECS_KEY)
    kinds: list[Kind] = [
        preemption.remedies,
        lambda c: scale_pool.remedies(c, specs),
        ports.remedies,
        volumes.remedies,
        toleration.remedies,
        affinity.remedies,
        resources.remedies,
    ]
    out: list[Remedy] = []
    notes: list[str] = []
    if ctx.pod.raw is None:
        notes.append("remedies: the pod's object was not kept: changes to it cannot be replayed")
    for kind in kinds:
        try:
            found, more = kind(ctx)
        except Exception as e:  # a remedy is advice: its failure must not cost the diagnosis
            notes.append(f"remedies: one kind was skipped after an internal error ({type(e).__name__}: {e})")
            continue
        out.extend(found)
        notes.extend(x for x in more if x not in notes)
    out.sort(key=lambda r: RANK.get(r.kind, 50))  # stable: each kind keeps its own order
    for i, r in enumerate(out, 1):
        r.rank = i
    return out, notes
