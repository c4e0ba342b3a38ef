def count_uppercase(text: str) -> int:
    """Return how many upper-case letters `text` has."""
    raise NotImplementedError
