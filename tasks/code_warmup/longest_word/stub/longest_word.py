def longest_word(text: str) -> str:
    """Return the longest space-separated word of `text` (the first one on a tie)."""
    raise NotImplementedError
