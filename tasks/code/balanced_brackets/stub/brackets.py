"""Bracket balancing."""


def first_error(text: str) -> int | None:
    """Return the index of the first bracket error, or None if balanced."""
    raise NotImplementedError


def is_balanced(text: str) -> bool:
    """Return True if all brackets are balanced and properly nested."""
    raise NotImplementedError
