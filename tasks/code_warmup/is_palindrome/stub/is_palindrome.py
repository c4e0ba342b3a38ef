def is_palindrome(text: str) -> bool:
    """Return True when `text` reads the same forwards and backwards."""
    raise NotImplementedError
