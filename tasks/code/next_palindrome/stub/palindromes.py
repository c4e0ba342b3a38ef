"""Palindrome helpers."""


def is_palindrome(text: str) -> bool:
    """Return True if the alphanumeric, case-folded text is a palindrome."""
    raise NotImplementedError


def next_palindrome(n: int) -> int:
    """Return the smallest palindromic integer strictly greater than n >= 0."""
    raise NotImplementedError
