def product(items: list[int]) -> int:
    result = 1
    for x in items:
        result *= x
    return result
