def second_largest(items: list[int]) -> int:
    """Return the second largest distinct number of `items` (which holds at least two distinct numbers)."""
    raise NotImplementedError
