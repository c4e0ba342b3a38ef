def first_and_last(items: list[int]) -> list[int]:
    return [items[0], items[-1]]
