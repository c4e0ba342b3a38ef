def fibonacci(n: int) -> int:
    """Return the n-th Fibonacci number, where fibonacci(0) is 0 and fibonacci(1) is 1."""
    raise NotImplementedError
