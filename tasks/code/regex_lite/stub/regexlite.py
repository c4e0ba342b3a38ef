"""A small regular-expression engine."""


def match(pattern: str, text: str) -> bool:
    """Return True if the whole text matches pattern."""
    raise NotImplementedError


def search(pattern: str, text: str) -> tuple[int, int] | None:
    """Return the leftmost-longest match span of pattern in text, or None."""
    raise NotImplementedError
