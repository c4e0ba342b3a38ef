def last_word(text: str) -> str:
    """Return the last space-separated word of `text`."""
    raise NotImplementedError
