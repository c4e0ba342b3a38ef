"""Knapsack problems."""

Item = tuple[int, int]


def _validate(items: list[Item], capacity: int) -> None:
    if capacity < 0:
        raise ValueError("capacity must be non-negative")
    for weight, value in items:
        if weight < 1 or value < 0:
            raise ValueError(f"invalid item ({weight}, {value})")


def best_subset(items: list[Item], capacity: int) -> tuple[int, list[int]]:
    """Return (best value, sorted indices) for the 0/1 knapsack."""
    _validate(items, capacity)
    n = len(items)
    # best[i][c]: best (value, -weight) using items i.. with capacity c.
    best = [[(0, 0)] * (capacity + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        weight, value = items[i]
        nxt, row = best[i + 1], best[i]
        for c in range(capacity + 1):
            skip = nxt[c]
            if weight <= c:
                v, negw = nxt[c - weight]
                take = (v + value, negw - weight)
                row[c] = take if take >= skip else skip
            else:
                row[c] = skip
    # Greedy reconstruction: take the earliest item whenever an optimal completion exists.
    chosen, c = [], capacity
    for i in range(n):
        weight, value = items[i]
        if weight <= c:
            v, negw = best[i + 1][c - weight]
            if (v + value, negw - weight) == best[i][c]:
                chosen.append(i)
                c -= weight
    return best[0][capacity][0], chosen


def unbounded_value(items: list[Item], capacity: int) -> int:
    """Return the best value when items may be reused."""
    _validate(items, capacity)
    best = [0] * (capacity + 1)
    for c in range(1, capacity + 1):
        best[c] = max([best[c - 1]] + [best[c - w] + v for w, v in items if w <= c])
    return best[capacity]
