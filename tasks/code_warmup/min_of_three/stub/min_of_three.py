def min_of_three(a: int, b: int, c: int) -> int:
    """Return the smallest of the three numbers."""
    raise NotImplementedError
