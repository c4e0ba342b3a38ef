def total(items: list[int]) -> int:
    return sum(items)
