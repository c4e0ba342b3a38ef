def reverse_string(text: str) -> str:
    """Return `text` with its characters in reverse order."""
    raise NotImplementedError
