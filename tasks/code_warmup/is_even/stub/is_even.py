def is_even(n: int) -> bool:
    """Return True when `n` is even, else False."""
    raise NotImplementedError
