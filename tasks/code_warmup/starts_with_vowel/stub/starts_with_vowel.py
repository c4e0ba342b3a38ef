def starts_with_vowel(word: str) -> bool:
    """Return True when `word` starts with a vowel (a, e, i, o, u, either case)."""
    raise NotImplementedError
