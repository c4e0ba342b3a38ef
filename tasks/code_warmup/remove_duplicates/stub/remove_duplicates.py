def remove_duplicates(items: list[int]) -> list[int]:
    """Return `items` without repeats, each kept where it first occurs."""
    raise NotImplementedError
