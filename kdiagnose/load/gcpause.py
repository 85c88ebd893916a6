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

__all__ = ["FREEZE_ABOVE_OBJECTS", "paused_gc", "without_gc"]

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
