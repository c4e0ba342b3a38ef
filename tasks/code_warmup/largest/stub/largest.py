def largest(items: list[int]) -> int:
    """Return the largest number in the non-empty list `items`."""
    raise NotImplementedError
