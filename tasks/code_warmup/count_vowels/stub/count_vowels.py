def count_vowels(text: str) -> int:
    """Return how many vowels (a, e, i, o, u, in either case) `text` has."""
    raise NotImplementedError
