"""Prefix tree."""

from collections.abc import Iterable


class Trie:
    """A set of strings stored as a prefix tree."""

    def __init__(self, words: Iterable[str] = ()) -> None:
        """Create a trie containing `words`."""
        raise NotImplementedError

    def insert(self, word: str) -> bool:
        """Add word; return True if it was new."""
        raise NotImplementedError

    def contains(self, word: str) -> bool:
        """Return True if word is stored."""
        raise NotImplementedError

    def delete(self, word: str) -> bool:
        """Remove word; return True if it was present."""
        raise NotImplementedError

    def __len__(self) -> int:
        """Number of stored words."""
        raise NotImplementedError

    def count_prefix(self, prefix: str) -> int:
        """Number of stored words starting with prefix."""
        raise NotImplementedError

    def starts_with(self, prefix: str) -> list[str]:
        """Sorted stored words starting with prefix."""
        raise NotImplementedError

    def longest_common_prefix(self) -> str:
        """Longest prefix shared by all stored words."""
        raise NotImplementedError

    def longest_prefix_of(self, text: str) -> str | None:
        """Longest stored word that is a prefix of text, or None."""
        raise NotImplementedError
