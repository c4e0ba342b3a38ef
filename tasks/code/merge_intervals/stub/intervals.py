"""Closed-interval arithmetic."""

Interval = tuple[int, int]


def merge(intervals: list[Interval]) -> list[Interval]:
    """Return the sorted union of the intervals."""
    raise NotImplementedError


def insert(intervals: list[Interval], new: Interval) -> list[Interval]:
    """Return the merged union of `intervals` and `new`."""
    raise NotImplementedError


def total_length(intervals: list[Interval]) -> int:
    """Return the total length covered by the intervals."""
    raise NotImplementedError


def gaps(intervals: list[Interval], lo: int, hi: int) -> list[Interval]:
    """Return the uncovered pieces of [lo, hi]."""
    raise NotImplementedError
