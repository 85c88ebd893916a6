"""Go's `sort.Slice`, step for step (Go's src/sort/slice.go and the generated src/sort/zsortfunc.go).

kube-scheduler sorts preemption victims with `sort.Slice(potentialVictims, MoreImportantPod)`
(defaultpreemption/default_preemption.go SelectVictimsOnNode). `sort.Slice` is pattern-defeating quicksort:
insertion sort up to 12 elements, and above that median-of-three or Tukey-ninther pivots, a pattern breaker
seeded with the length, and a heapsort fallback. It is not stable: equal-priority victims with equal start
times come out in an order only this exact sequence of comparisons and swaps reproduces, and that order
decides which of them are reprieved. Python's stable `sorted` gives a different victim set, so the
algorithm is mirrored here with the same comparison and swap sequence (pdqsort has been Go's sort since
Go 1.19; unchanged through the Go releases kube-scheduler v1.31-v1.35 are built with).

`less` need not be a strict weak order: util.MoreImportantPod calls time.Now() once per pod without a
start time, so of two such pods the first argument always compares as less. Mirroring the comparison
sequence exactly is what makes the result match in that case too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["sort_slice"]

T = TypeVar("T")

_MAX_INSERTION = 12
_SHORTEST_NINTHER = 50
_MAX_SWAPS = 4 * 3
_MASK64 = (1 << 64) - 1

# sortedHint
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


def sort_slice(items: list[T], less: Callable[[T, T], bool]) -> None:
    """sort.Slice(items, func(i, j) { return less(items[i], items[j]) }), in place."""
    n = len(items)
    _Sorter(items, less).pdqsort(0, n, n.bit_length())


class _Sorter:
    """The lessSwap pair over one list: Less(i, j) and Swap(i, j) by index, as zsortfunc.go uses them."""

    __slots__ = ("d", "lt")

    def __init__(self, items: list[T], less: Callable[[T, T], bool]) -> None:
        self.d: list[object] = items  # type: ignore[assignment]
        self.lt: Callable[[object, object], bool] = less  # type: ignore[assignment]

    def less(self, i: int, j: int) -> bool:
        return self.lt(self.d[i], self.d[j])

    def swap(self, i: int, j: int) -> None:
        d = self.d
        d[i], d[j] = d[j], d[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, lo, hi = a, 0, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(lo, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced = True
        was_partitioned = True
        while True:
            length = b - a
            if length <= _MAX_INSERTION:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING and self.partial_insertion_sort(a, b):
                return
            # Many duplicates: split off the elements equal to the pivot.
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, was_partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i += 1
            j -= 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        max_steps, shortest_shifting = 5, 50
        i = a + 1
        for _ in range(max_steps):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < shortest_shifting:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                # Go's loop runs down to index 1, not to a: kept as is.
                j = i - 1
                while j >= 1:
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
                    j -= 1
            if b - i >= 2:
                j = i + 1
                while j < b:
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
                    j += 1
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length >= 8:
            random = length  # xorshift seeded with the length
            modulus = 1 << length.bit_length()  # nextPowerOfTwo
            idx = a + (length // 4) * 2 - 1
            while idx <= a + (length // 4) * 2 + 1:
                random ^= (random << 13) & _MASK64
                random ^= random >> 7
                random ^= (random << 17) & _MASK64
                other = random & (modulus - 1)
                if other >= length:
                    other -= length
                self.swap(idx, a + other)
                idx += 1

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        n = b - a
        swaps = [0]
        i = a + n // 4 * 1
        j = a + n // 4 * 2
        k = a + n // 4 * 3
        if n >= 8:
            if n >= _SHORTEST_NINTHER:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == _MAX_SWAPS:
            return j, _DECREASING
        return j, _UNKNOWN

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1
