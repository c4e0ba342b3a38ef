"""Anagram grouping."""


def group_anagrams(words: list[str]) -> list[list[str]]:
    """Partition words into anagram groups in first-appearance order."""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault("".join(sorted(word.lower())), []).append(word)
    return list(groups.values())


def largest_group(words: list[str]) -> list[str]:
    """Return the first largest anagram group."""
    best: list[str] = []
    for group in group_anagrams(words):
        if len(group) > len(best):
            best = group
    return best
