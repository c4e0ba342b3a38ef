def add(a: int, b: int) -> int:
    """Return the sum of `a` and `b`."""
    raise NotImplementedError
