def contains(items: list[int], value: int) -> bool:
    """Return True when `value` is one of `items`."""
    raise NotImplementedError
