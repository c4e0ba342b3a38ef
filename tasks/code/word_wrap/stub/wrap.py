"""Word wrapping."""


def wrap(text: str, width: int) -> list[str]:
    """Greedily wrap text into lines of at most `width` characters."""
    raise NotImplementedError


def justify(text: str, width: int) -> list[str]:
    """Wrap text and pad every line to exactly `width` characters."""
    raise NotImplementedError
