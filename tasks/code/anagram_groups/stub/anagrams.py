"""Anagram grouping."""


def group_anagrams(words: list[str]) -> list[list[str]]:
    """Partition words into anagram groups in first-appearance order."""
    raise NotImplementedError


def largest_group(words: list[str]) -> list[str]:
    """Return the first largest anagram group."""
    raise NotImplementedError
