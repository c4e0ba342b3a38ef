def count_char(text: str, ch: str) -> int:
    """Return how many times the character `ch` occurs in `text`."""
    raise NotImplementedError
