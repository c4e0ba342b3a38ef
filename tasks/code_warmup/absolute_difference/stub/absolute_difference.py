def absolute_difference(a: int, b: int) -> int:
    """Return how far apart `a` and `b` are (never negative)."""
    raise NotImplementedError
