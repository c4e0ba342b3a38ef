def square(n: int) -> int:
    return n * n
