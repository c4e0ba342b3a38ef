def is_empty(text: str) -> bool:
    """Return True when `text` has no characters."""
    raise NotImplementedError
