def most_common_char(text: str) -> str:
    """Return the character that occurs most often in the non-empty `text` (the one that occurs first on a tie)."""
    raise NotImplementedError
