def sort_descending(items: list[int]) -> list[int]:
    return sorted(items, reverse=True)
