def is_prime(n: int) -> bool:
    """Return True when `n` is a prime number."""
    raise NotImplementedError
