def both_true(a: bool, b: bool) -> bool:
    """Return True only when `a` and `b` are both True."""
    raise NotImplementedError
