"""Closed-interval arithmetic."""

Interval = tuple[int, int]


def merge(intervals: list[Interval]) -> list[Interval]:
    """Return the sorted union of the intervals."""
    for start, end in intervals:
        if start > end:
            raise ValueError(f"invalid interval ({start}, {end})")
    merged: list[Interval] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            last_start, last_end = merged[-1]
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def insert(intervals: list[Interval], new: Interval) -> list[Interval]:
    """Return the merged union of `intervals` and `new`."""
    return merge([*intervals, new])


def total_length(intervals: list[Interval]) -> int:
    """Return the total length covered by the intervals."""
    return sum(end - start for start, end in merge(intervals))


def gaps(intervals: list[Interval], lo: int, hi: int) -> list[Interval]:
    """Return the uncovered pieces of [lo, hi]."""
    if lo > hi:
        raise ValueError("lo must be <= hi")
    result: list[Interval] = []
    cursor = lo
    for start, end in merge(intervals):
        if end < lo:
            continue
        if start > hi:
            break
        if start > cursor:
            result.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < hi:
        result.append((cursor, hi))
    return result
