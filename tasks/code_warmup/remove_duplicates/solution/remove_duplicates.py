def remove_duplicates(items: list[int]) -> list[int]:
    seen = []
    for x in items:
        if x not in seen:
            seen.append(x)
    return seen
