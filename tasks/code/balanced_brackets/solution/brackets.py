"""Bracket balancing."""

_PAIRS = {")": "(", "]": "[", "}": "{"}
_OPENERS = frozenset(_PAIRS.values())


def first_error(text: str) -> int | None:
    """Return the index of the first bracket error, or None if balanced."""
    stack: list[tuple[str, int]] = []
    for index, ch in enumerate(text):
        if ch in _OPENERS:
            stack.append((ch, index))
        elif ch in _PAIRS:
            if not stack or stack[-1][0] != _PAIRS[ch]:
                return index
            stack.pop()
    return stack[0][1] if stack else None


def is_balanced(text: str) -> bool:
    """Return True if all brackets are balanced and properly nested."""
    return first_error(text) is None
