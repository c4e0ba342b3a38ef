def is_power_of_two(n: int) -> bool:
    """Return True when `n` is 1, 2, 4, 8, ... (a power of two)."""
    raise NotImplementedError
