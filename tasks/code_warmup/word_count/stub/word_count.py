def word_count(text: str) -> int:
    """Return how many words `text` has (words are separated by whitespace)."""
    raise NotImplementedError
