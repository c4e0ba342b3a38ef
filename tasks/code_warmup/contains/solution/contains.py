def contains(items: list[int], value: int) -> bool:
    return value in items
