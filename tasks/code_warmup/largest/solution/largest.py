def largest(items: list[int]) -> int:
    return max(items)
