"""Prefix tree."""

from __future__ import annotations

from collections.abc import Iterable


class _Node:
    __slots__ = ("children", "terminal", "count")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.terminal = False
        self.count = 0  # number of words in this subtree


class Trie:
    """A set of strings stored as a prefix tree."""

    def __init__(self, words: Iterable[str] = ()) -> None:
        """Create a trie containing `words`."""
        self._root = _Node()
        for word in words:
            self.insert(word)

    def _find(self, prefix: str) -> _Node | None:
        node = self._root
        for ch in prefix:
            node = node.children.get(ch)
            if node is None:
                return None
        return node

    def insert(self, word: str) -> bool:
        """Add word; return True if it was new."""
        if self.contains(word):
            return False
        node = self._root
        node.count += 1
        for ch in word:
            node = node.children.setdefault(ch, _Node())
            node.count += 1
        node.terminal = True
        return True

    def contains(self, word: str) -> bool:
        """Return True if word is stored."""
        node = self._find(word)
        return node is not None and node.terminal

    def delete(self, word: str) -> bool:
        """Remove word; return True if it was present."""
        if not self.contains(word):
            return False
        node = self._root
        node.count -= 1
        for ch in word:
            child = node.children[ch]
            child.count -= 1
            if child.count == 0:
                del node.children[ch]
                return True
            node = child
        node.terminal = False
        return True

    def __len__(self) -> int:
        """Number of stored words."""
        return self._root.count

    def count_prefix(self, prefix: str) -> int:
        """Number of stored words starting with prefix."""
        node = self._find(prefix)
        return node.count if node else 0

    def starts_with(self, prefix: str) -> list[str]:
        """Sorted stored words starting with prefix."""
        node = self._find(prefix)
        found: list[str] = []
        if node is None:
            return found
        stack = [(node, prefix)]
        while stack:
            current, text = stack.pop()
            if current.terminal:
                found.append(text)
            for ch, child in current.children.items():
                stack.append((child, text + ch))
        return sorted(found)

    def longest_common_prefix(self) -> str:
        """Longest prefix shared by all stored words."""
        node = self._root
        chars: list[str] = []
        while node.count and not node.terminal and len(node.children) == 1:
            ch, node = next(iter(node.children.items()))
            chars.append(ch)
        return "".join(chars)

    def longest_prefix_of(self, text: str) -> str | None:
        """Longest stored word that is a prefix of text, or None."""
        node = self._root
        best = 0 if node.terminal else None
        for i, ch in enumerate(text):
            node = node.children.get(ch)
            if node is None:
                break
            if node.terminal:
                best = i + 1
        return None if best is None else text[:best]
