"""Word frequency counting."""

import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z]+")


def top_words(text: str, k: int) -> list[tuple[str, int]]:
    """Return the k most frequent lowercase words with their counts."""
    if k < 0:
        raise ValueError("k must be non-negative")
    counts = Counter(word.lower() for word in _WORD.findall(text))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:k]
