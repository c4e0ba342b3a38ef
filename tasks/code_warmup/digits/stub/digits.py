def digits(n: int) -> list[int]:
    """Return the decimal digits of the non-negative number `n`, most significant first."""
    raise NotImplementedError
