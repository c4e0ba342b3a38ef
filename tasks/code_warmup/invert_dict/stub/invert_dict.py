def invert_dict(mapping: dict[str, int]) -> dict[int, str]:
    """Return a dict with the keys and values of `mapping` swapped."""
    raise NotImplementedError
