"""Remedies for one unschedulable pod: every kind, each proven by a what-if replay, classified, ranked.

Safety first (remedies/safety.py): a change that would move the pod to another arch/OS than its images run
on is dropped to the notes ("Ruled out"); one that puts a pod requesting no accelerator on accelerator nodes
is risky, whatever the route (scale-up, toleration, relaxed selector).

Ranking (README "How remedies are ranked"), lowest key first:
(safety class: automatic < safe < risky, -pending pods of the workload it places, kind order, change size,
summary). `covers`: scale-ups count the pods they pack; other kinds one pod per unblocked node, capped at the
workload's pending pods. Change size, compared within a kind: the cut fraction of a right-size, nodes added
or uncordoned, taints tolerated, terms relaxed, victims preempted, pods moved off a host port.
"""

from __future__ import annotations

from collections.abc import Callable

from kdiagnose.model.objects import Node
from kdiagnose.model.pools import PoolSpec
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.remedies import (
    affinity,
    missing,
    node_declared_features,
    node_unschedulable,
    nominated,
    ports,
    preemption,
    resources,
    safety,
    scale_pool,
    toleration,
    volume_restrictions,
    volumes,
)
from kdiagnose.remedies.whatif import Context
from kdiagnose.results import AUTOMATIC, RISKY, SAFE, SAFETY_ORDER, Remedy
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.engine import Scheduler

__all__ = ["RANK", "compute_remedies", "compute_top_remedies", "rank_key", "set_pool_specs"]

# Kind order, a tie-break after safety, coverage and size: capacity and node state (no change to the
# workload) before changes to the workload's requirements.
RANK = {
    "preemption": 0,
    "fix-reference": 1,
    "create-object": 2,
    "uncordon": 3,
    "stale-nomination": 4,
    "scale-pool": 5,
    "raise-max": 5,
    "raise-limit": 5,
    "free-port": 6,
    "free-claim": 6,
    "volume": 7,
    "node-feature": 8,
    "toleration": 10,
    "relax-affinity": 11,
    "right-size": 12,
}
_SPECS_KEY = "remedies/pool-specs"

Kind = Callable[[Context], tuple[list[Remedy], list[str]]]


def set_pool_specs(snapshot: Snapshot, specs: list[PoolSpec]) -> None:
    """Pools from `--pools FILE` for this snapshot (kept beside its caches; never a verdict)."""
    snapshot.cache[_SPECS_KEY] = list(specs)


# Per kind (in the order they are tried): the best safety class and the lowest kind rank its remedies can
# have, so a search for the top N can tell when no later kind could outrank what it already has.
_BEST: dict[str, tuple[str, int]] = {
    "missing": (SAFE, RANK["fix-reference"]),
    "preemption": (AUTOMATIC, RANK["preemption"]),
    "node-unschedulable": (SAFE, RANK["uncordon"]),
    "node-declared-features": (RISKY, RANK["node-feature"]),  # always risky (node_declared_features.py)
    "nominated": (SAFE, RANK["stale-nomination"]),
    "scale-pool": (AUTOMATIC, RANK["scale-pool"]),  # Karpenter's and an autoscaler's own scale-ups
    "ports": (SAFE, RANK["free-port"]),
    "volume-restrictions": (SAFE, RANK["free-claim"]),
    "volumes": (AUTOMATIC, RANK["volume"]),  # a zonal scale-up, with the autoscaler's evidence
    "toleration": (SAFE, RANK["toleration"]),
    "affinity": (RISKY, RANK["relax-affinity"]),  # every relaxation is risky (affinity.py)
    "resources": (SAFE, RANK["right-size"]),
}


def compute_remedies(
    snapshot: Snapshot, scheduler: Scheduler, diagnosis: Diagnosis, *, pools: list[PoolSpec] | None = None
) -> tuple[list[Remedy], list[str]]:
    """(ranked remedies, notes such as per-pool "why no scale-up") for a pod the replay could not place."""
    found, notes, _ = compute_top_remedies(snapshot, scheduler, diagnosis, pools=pools)
    return found, notes


def compute_top_remedies(
    snapshot: Snapshot,
    scheduler: Scheduler,
    diagnosis: Diagnosis,
    *,
    pools: list[PoolSpec] | None = None,
    limit: int | None = None,
) -> tuple[list[Remedy], list[str], list[str]]:
    """compute_remedies, stopping once the `limit` best are known (None: every kind is tried).

    Kinds are tried in order; after each, when `limit` remedies rank ahead of anything a later kind could
    give (its best safety class and kind rank, placing every pending pod of the workload), the later kinds
    are not tried: the top `limit` are then exactly those a full search ranks first. Returns (remedies,
    notes, the kinds not tried); with kinds left out only the top `limit` are returned, and the notes
    lack what the kinds not tried would have said."""
    if diagnosis.scheduled or not diagnosis.handled or diagnosis.gated:
        return [], [], []
    ctx = Context(snapshot, scheduler, diagnosis)
    if diagnosis.preenqueue is not None:
        # Held at PreEnqueue by another plugin (DRA: a claim does not exist yet): no node was tried, so the
        # only remedy is the missing object; the kinds that read node verdicts have nothing to read.
        held, held_notes = missing.remedies(ctx)
        held.sort(key=rank_key)
        for i, r in enumerate(held, 1):
            r.rank = i
        return held, held_notes, []
    specs = pools if pools is not None else snapshot.cache.get(_SPECS_KEY)
    kinds: list[tuple[str, Kind]] = [
        ("missing", missing.remedies),
        ("preemption", preemption.remedies),
        ("node-unschedulable", node_unschedulable.remedies),
        ("node-declared-features", node_declared_features.remedies),
        ("nominated", nominated.remedies),
        ("scale-pool", lambda c: scale_pool.remedies(c, specs)),
        ("ports", ports.remedies),
        ("volume-restrictions", volume_restrictions.remedies),
        ("volumes", volumes.remedies),
        ("toleration", toleration.remedies),
        ("affinity", affinity.remedies),
        ("resources", resources.remedies),
    ]
    out: list[Remedy] = []
    notes: list[str] = []
    if ctx.pod.raw is None:
        notes.append("remedies: the pod's object was not kept: changes to it cannot be replayed")
    pending = 1 + len(scale_pool.siblings(ctx))
    not_tried: list[str] = []
    ruled: list[str] = []
    for i, (_, kind) in enumerate(kinds):
        if limit is not None and len(out) >= limit:
            # The best key any kind left could give: its best class, every pending pod placed, its rank,
            # below any change size and summary.
            bound = min(
                (SAFETY_ORDER[_BEST[k][0]], -pending, _BEST[k][1], float("-inf"), "") for k, _ in kinds[i:]
            )
            if sorted(map(rank_key, out))[limit - 1] < bound:
                not_tried = [k for k, _ in kinds[i:]]
                break
        try:
            found, more = kind(ctx)
        except Exception as e:  # a remedy is advice: its failure must not cost the diagnosis
            notes.append(f"remedies: one kind was skipped after an internal error ({type(e).__name__}: {e})")
            continue
        # Classified and counted kind by kind (each remedy on its own), so the ranks above are final.
        found = _classify(ctx, found, ruled, specs)
        _count(found, pending)
        out.extend(found)
        notes.extend(x for x in more if x not in notes)
    # What classifying ruled out comes after every kind's own notes.
    notes.extend(x for x in ruled if x not in notes)
    out.sort(key=rank_key)
    if not_tried:
        del out[limit:]
    for i, r in enumerate(out, 1):
        r.rank = i
    return out, notes, not_tried


def _count(found: list[Remedy], pending: int) -> None:
    """`covers` and a scale-up's change size (README "How remedies are ranked")."""
    for r in found:
        if r.kind in ("scale-pool", "raise-max", "raise-limit", "volume") and isinstance(
            r.details.get("pods"), int
        ):
            # A scale-up packs the workload's pending pods itself: it knows how many it places, on how many nodes.
            r.covers = r.covers or int(r.details["pods"])
            r.change_size = r.change_size or float(r.details.get("count") or 0)
        if not r.covers:
            r.covers = min(pending, max(len(r.unblocks), 1))


def rank_key(r: Remedy) -> tuple[int, int, int, float, str]:
    """(safety class, -pods of the workload placed, kind order, change size, summary): every tie explicit."""
    return (SAFETY_ORDER.get(r.safety, 9), -r.covers, RANK.get(r.kind, 50), r.change_size, r.summary)


def _nodes_of(ctx: Context, r: Remedy, specs: list[PoolSpec] | None) -> list[Node]:
    """The nodes a remedy would place the pod on; a simulated node reads as its pool's template member."""
    out: list[Node] = []
    template = str(r.details.get("template") or "")
    for name in r.unblocks:
        ni = ctx.snapshot.node_info_by_name.get(name) or ctx.snapshot.node_info_by_name.get(template)
        if ni is not None:
            out.append(ni.node)
    if not out and r.details.get("pool"):
        pool = next(
            (p for p in scale_pool.pools_for(ctx.snapshot, specs) if p.name == r.details["pool"]), None
        )
        if pool is not None and pool.members:
            out.append(pool.members[0].node)
    return out


def _classify(
    ctx: Context, found: list[Remedy], notes: list[str], specs: list[PoolSpec] | None
) -> list[Remedy]:
    """Drop what would run the pod on another OS/arch (to the notes); mark accelerator placements risky."""
    platform, source = safety.implied_platform(ctx.snapshot, ctx.pod)
    wants_hw = safety.requests_accelerator(ctx.pod)
    kept: list[Remedy] = []
    for r in found:
        if r.kind == "preemption":
            kept.append(r)
            continue
        nodes = _nodes_of(ctx, r, specs)
        if platform and nodes:
            good = [x for x in nodes if safety.fits_platform(x, platform)]
            if not good:
                os_, arch = safety.platform_of(nodes[0])
                want = (
                    "/".join(sorted(platform.get("os", set())))
                    + " "
                    + "/".join(sorted(platform.get("arch", set())))
                )
                line = safety.ruled_out(
                    r.kind,
                    r.summary,
                    f"it would place the pod only on {os_ or '?'}/{arch or '?'} nodes ({nodes[0].name}), and "
                    f"{source} say it runs on {want.strip()}",
                )
                if line not in notes:
                    notes.append(line)
                continue
            if len(good) < len(nodes):
                names = {x.name for x in good}
                r.unblocks = [u for u in r.unblocks if u in names] or r.unblocks
        if not wants_hw and nodes and all(safety.accelerators_of(x) for x in nodes):
            hw = ", ".join(safety.accelerators_of(nodes[0]))
            r.safety = RISKY
            sentence = (
                f"places a workload that requests no accelerator on {hw} nodes: it takes capacity (and cost) "
                "meant for accelerator work, and those nodes may be drained or tainted for it later"
            )
            r.risk = f"{sentence}; {r.risk}" if r.risk else sentence
        kept.append(r)
    return kept
