def gcd(a: int, b: int) -> int:
    """Return the greatest common divisor of the positive numbers `a` and `b`."""
    raise NotImplementedError
