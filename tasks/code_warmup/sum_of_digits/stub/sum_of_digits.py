def sum_of_digits(n: int) -> int:
    """Return the sum of the decimal digits of the non-negative number `n`."""
    raise NotImplementedError
