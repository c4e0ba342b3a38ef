def flatten(lists: list[list[int]]) -> list[int]:
    """Return the elements of the inner lists, in order, in one list."""
    raise NotImplementedError
