def merge_dicts(first: dict, second: dict) -> dict:
    """Return one dict with the entries of both; where a key is in both, the value from `second` wins."""
    raise NotImplementedError
