def double_all(items: list[int]) -> list[int]:
    """Return a new list with every number of `items` doubled."""
    raise NotImplementedError
