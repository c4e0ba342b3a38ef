def absolute_difference(a: int, b: int) -> int:
    return abs(a - b)
