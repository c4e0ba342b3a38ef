def square(n: int) -> int:
    """Return `n` multiplied by itself."""
    raise NotImplementedError
