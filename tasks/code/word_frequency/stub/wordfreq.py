"""Word frequency counting."""


def top_words(text: str, k: int) -> list[tuple[str, int]]:
    """Return the k most frequent lowercase words with their counts."""
    raise NotImplementedError
