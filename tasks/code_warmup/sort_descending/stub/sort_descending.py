def sort_descending(items: list[int]) -> list[int]:
    """Return a new list of `items` sorted from largest to smallest."""
    raise NotImplementedError
