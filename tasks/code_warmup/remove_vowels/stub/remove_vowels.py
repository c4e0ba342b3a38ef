def remove_vowels(text: str) -> str:
    """Return `text` without its vowels (a, e, i, o, u, in either case)."""
    raise NotImplementedError
