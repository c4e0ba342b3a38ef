def index_of(items: list[int], value: int) -> int:
    return items.index(value) if value in items else -1
