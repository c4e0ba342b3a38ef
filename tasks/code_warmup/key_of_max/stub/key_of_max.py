def key_of_max(scores: dict[str, int]) -> str:
    """Return the key of the non-empty dict `scores` whose value is the largest."""
    raise NotImplementedError
