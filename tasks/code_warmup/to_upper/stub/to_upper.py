def to_upper(text: str) -> str:
    """Return `text` in upper case."""
    raise NotImplementedError
