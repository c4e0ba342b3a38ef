def factorial(n: int) -> int:
    """Return n! (the product 1 * 2 * ... * n; factorial(0) is 1)."""
    raise NotImplementedError
