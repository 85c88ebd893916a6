"""Pause Python's cyclic garbage collector while a large input is loaded.

Loading 150,000 pods allocates tens of millions of small, acyclic, long-lived objects; every gen-2 collection
walks all of them, which doubled load and snapshot time in the benchmarks (benchmarks/README.md). Reference
counting still frees everything as usual; only the cycle detector waits. A big snapshot is then frozen
(gc.freeze) so the collections that the diagnosis phase triggers do not walk it again either.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

__all__ = ["FREEZE_ABOVE_OBJECTS", "PerItemGC", "paused_gc", "without_gc"]

P = ParamSpec("P")
R = TypeVar("R")

# Below this many tracked objects a freeze buys nothing measurable (the golden fixtures, small dumps).
FREEZE_ABOVE_OBJECTS = 1_000_000


@contextmanager
def without_gc(freeze: bool = False) -> Iterator[None]:
    """Disable the cycle collector inside the block (re-entrant); optionally freeze what survived it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # With collection off, the gen-0 count is the number of container objects created meanwhile.
            if freeze and gc.get_count()[0] > FREEZE_ABOVE_OBJECTS:
                gc.freeze()
            gc.enable()


def paused_gc(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator form of without_gc(freeze=True), for the load and snapshot-build entry points."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with without_gc(freeze=True):
            return fn(*args, **kwargs)

    return wrapper


# per_item: a full collection after this many items (cycles among objects that survived an item's own
# collection, e.g. memoized diagnoses evicted later, are found there).
FULL_COLLECTION_EVERY = 100
# Items collected before the loop may freeze instead (PerItemGC), and the garbage they may have found in all;
# in freeze mode every SAMPLE_EVERY-th item is collected still, and back to collecting when it finds more.
WARMUP_ITEMS = 5
LITTLE_GARBAGE = 100
SAMPLE_EVERY = 50


class PerItemGC:
    """The cycle collector run once per item of a loop (one pending pod's diagnosis) instead of whenever
    allocations cross its thresholds. At 5,000 nodes one pod's replay and what-ifs allocate enough for ~20
    young and ~2 middle collections, and a full one every few pods; each traced the pod's own live work
    (verdict dicts, what-if snapshots) again, about a quarter of the diagnosis CPU (benchmarks/README.md).
    Collection is off inside an item; after it, one collection of the young generations finds every cycle
    the item left (all of its objects are young then), and every FULL_COLLECTION_EVERY items a full one,
    after which the survivors are frozen (long-lived caches; a cycle among them found later would stay, the
    price of not tracing them again: peak RSS of 1,000 pods at 5,000 nodes unchanged, benchmarks/README.md).

    When the first WARMUP_ITEMS items' collections found fewer than LITTLE_GARBAGE objects in all (200 pods
    at 5,000 nodes: 135 objects in 200 collections, the full ones none), the loop leaves no cycles to
    speak of, and what its collections cost is tracing what the items keep (their memoized indexes,
    ~2.5 ms of each pod's ~34): from then on each item's young objects are frozen (gc.freeze, a
    constant-time move) instead. Every SAMPLE_EVERY-th item is collected as before, only its own objects
    being young, and one that finds LITTLE_GARBAGE or more puts the loop back to collecting each item: a
    loop that turns out to make cycles leaves at most the cycles of the items frozen before the sample.
    Reference counting frees everything else as usual. With the collector already off (the load's own
    pause, a caller's), nothing changes."""

    __slots__ = ("_collect", "_depth", "_found", "_freezing", "_items", "_was")

    def __init__(self, collect: bool = True) -> None:
        # collect=False (a loop of one item): the collector is only re-enabled after it, as the item's own
        # collection would trace everything it built (the snapshot's first indexes, ~90 ms at 5,000 nodes)
        # for cycles that the next automatic collection finds as well.
        self._collect = collect
        self._items = 0
        self._depth = 0
        self._was = False
        self._found = 0  # garbage objects the warm-up items' collections found
        self._freezing = False

    @property
    def freezing(self) -> bool:
        """Whether items are frozen rather than collected now."""
        return self._freezing

    def __enter__(self) -> None:
        if self._depth == 0:  # re-entrant: the outermost item collects
            self._was = gc.isenabled()
            gc.disable()
        self._depth += 1

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._was:
            self._items += 1
            if self._collect:
                self._after_item()
            gc.enable()

    def _after_item(self) -> None:
        n = self._items
        if self._freezing:
            if n % SAMPLE_EVERY == 0 and gc.collect(1) >= LITTLE_GARBAGE:
                self._freezing = False  # this loop does make cycles: collect each item again
            else:
                gc.freeze()
            return
        if n % FULL_COLLECTION_EVERY == 0:
            self._found += gc.collect(2)
            # What survived a full collection after this many items is long-lived (the plugins'
            # per-snapshot caches, node classes, memoized remedies): frozen like the snapshot, so the
            # next full collection traces only what came since (at 5,000 nodes each full one traced
            # ~215,000 such objects again, ~220 ms).
            gc.freeze()
        else:
            self._found += gc.collect(1)
        if n == WARMUP_ITEMS and self._found < LITTLE_GARBAGE:
            # What the warm-up items keep was traced once by their collections: frozen with the rest.
            gc.freeze()
            self._freezing = True
