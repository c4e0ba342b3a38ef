def flatten(lists: list[list[int]]) -> list[int]:
    return [x for inner in lists for x in inner]
