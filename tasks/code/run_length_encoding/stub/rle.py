"""Run-length encoding."""


def encode(text: str) -> str:
    """Encode `text` as count+character groups."""
    raise NotImplementedError


def decode(encoded: str) -> str:
    """Decode count+character groups back into text."""
    raise NotImplementedError
