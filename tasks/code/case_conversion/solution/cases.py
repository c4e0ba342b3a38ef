"""Identifier case conversion."""

import re

_SEPARATORS = re.compile(r"[_\- ]+")


def _split_piece(piece: str) -> list[str]:
    words: list[str] = []
    start = 0
    for i in range(1, len(piece)):
        ch, prev = piece[i], piece[i - 1]
        if not ch.isupper():
            continue
        after_lower = prev.islower() or prev.isdigit()
        acronym_end = prev.isupper() and i + 1 < len(piece) and piece[i + 1].islower()
        if after_lower or acronym_end:
            words.append(piece[start:i])
            start = i
    words.append(piece[start:])
    return words


def split_words(name: str) -> list[str]:
    """Split an identifier into its words."""
    words: list[str] = []
    for piece in _SEPARATORS.split(name):
        if piece:
            words.extend(_split_piece(piece))
    return words


def to_snake(name: str) -> str:
    """Return the identifier in snake_case."""
    return "_".join(word.lower() for word in split_words(name))


def to_camel(name: str, upper_first: bool = False) -> str:
    """Return the identifier in camelCase (PascalCase when upper_first)."""
    words = split_words(name)
    parts = [word[:1].upper() + word[1:].lower() for word in words]
    if words and not upper_first:
        parts[0] = words[0].lower()
    return "".join(parts)
