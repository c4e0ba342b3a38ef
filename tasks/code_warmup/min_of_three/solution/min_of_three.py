def min_of_three(a: int, b: int, c: int) -> int:
    return min(a, b, c)
