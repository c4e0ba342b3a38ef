def sum_of_squares(n: int) -> int:
    """Return 1*1 + 2*2 + ... + n*n (0 when n is 0)."""
    raise NotImplementedError
