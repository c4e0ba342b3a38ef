def product(items: list[int]) -> int:
    """Return the product of the numbers in `items` (1 for an empty list)."""
    raise NotImplementedError
