"""Go's sort.Slice mirrored exactly: permutations recorded from real Go (tests/data/gosort_vectors.json).

The vectors were produced by a throwaway Go program (go1.26.8, package sort) that ran sort.Slice with
kube-scheduler's util.MoreImportantPod comparator (a pod without startTime reads time.Now() at every
comparison) over generated priority/startTime lists, and wrote each input with Go's output order; the
file's "note" says the same. The expected orders come from Go, never from kdiagnose.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.model.objects import Pod
from kdiagnose.scheduler.gosort import sort_slice
from kdiagnose.scheduler.preemption import sort_by_importance

_VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "gosort_vectors.json").read_text()
)["cases"]


def _pods(raw: list[list[Any]]) -> list[Pod]:
    return [
        Pod(
            {
                "metadata": {"name": f"p{i}", "namespace": "default"},
                "spec": {"priority": prio},
                "status": {"startTime": start} if start else {},
            }
        )
        for i, (prio, start) in enumerate(raw)
    ]


@pytest.mark.parametrize("case", _VECTORS, ids=[c["name"] for c in _VECTORS])
def test_victim_order_matches_go_sort_slice(case: dict[str, Any]) -> None:
    pods = _pods(case["pods"])
    got = sort_by_importance(pods)
    assert [int(p.name[1:]) for p in got] == case["order"]


def test_vectors_cover_unstable_orders() -> None:
    """The corpus must hold cases where Go's order differs from a stable sort, or it proves nothing."""
    differ = 0
    for c in _VECTORS:
        stable = sorted(range(len(c["pods"])), key=lambda i: (-c["pods"][i][0], c["pods"][i][1] or "~"))
        differ += stable != c["order"]
    assert differ >= 20


def test_short_slices_are_insertion_sorted_so_equal_elements_keep_their_order() -> None:
    items = [(1, "a"), (0, "b"), (1, "c"), (0, "d")]
    sort_slice(items, lambda x, y: x[0] < y[0])
    assert items == [(0, "b"), (0, "d"), (1, "a"), (1, "c")]
