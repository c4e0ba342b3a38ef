def even_numbers(items: list[int]) -> list[int]:
    return [x for x in items if x % 2 == 0]
