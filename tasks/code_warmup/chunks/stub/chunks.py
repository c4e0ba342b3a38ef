def chunks(items: list[int], size: int) -> list[list[int]]:
    """Return `items` cut into lists of `size` elements (the last one may be shorter)."""
    raise NotImplementedError
