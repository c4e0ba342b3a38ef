def strip_spaces(text: str) -> str:
    """Return `text` without the spaces at its start and end."""
    raise NotImplementedError
