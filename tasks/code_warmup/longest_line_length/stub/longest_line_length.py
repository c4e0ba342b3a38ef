def longest_line_length(text: str) -> int:
    """Return the length of the longest line of `text` (0 for an empty text)."""
    raise NotImplementedError
