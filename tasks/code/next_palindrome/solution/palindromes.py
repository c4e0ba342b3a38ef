"""Palindrome helpers."""


def is_palindrome(text: str) -> bool:
    """Return True if the alphanumeric, case-folded text is a palindrome."""
    cleaned = [ch.lower() for ch in text if ch.isalnum()]
    return cleaned == cleaned[::-1]


def _mirror(half: str, length: int) -> int:
    return int(half + half[: length // 2][::-1])


def next_palindrome(n: int) -> int:
    """Return the smallest palindromic integer strictly greater than n >= 0."""
    if n < 0:
        raise ValueError("n must be non-negative")
    target = n + 1
    digits = str(target)
    length = len(digits)
    half = digits[: (length + 1) // 2]
    candidate = _mirror(half, length)
    if candidate >= target:
        return candidate
    bigger = str(int(half) + 1)
    if len(bigger) > len(half):  # e.g. 999 -> 1001
        return 10**length + 1
    return _mirror(bigger, length)
