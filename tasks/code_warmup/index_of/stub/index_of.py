def index_of(items: list[int], value: int) -> int:
    """Return the position of the first `value` in `items`, or -1 when it is not there."""
    raise NotImplementedError
