def remove_spaces(text: str) -> str:
    """Return `text` with every space removed."""
    raise NotImplementedError
