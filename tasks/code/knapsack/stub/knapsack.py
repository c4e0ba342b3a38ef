"""Knapsack problems."""

Item = tuple[int, int]


def best_subset(items: list[Item], capacity: int) -> tuple[int, list[int]]:
    """Return (best value, sorted indices) for the 0/1 knapsack."""
    raise NotImplementedError


def unbounded_value(items: list[Item], capacity: int) -> int:
    """Return the best value when items may be reused."""
    raise NotImplementedError
