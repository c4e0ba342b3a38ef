def double_all(items: list[int]) -> list[int]:
    return [2 * x for x in items]
