"""Deterministic Huffman coding."""


def build_codes(text: str) -> dict[str, str]:
    """Return the deterministic Huffman code table for text."""
    raise NotImplementedError


def encode(text: str, codes: dict[str, str]) -> str:
    """Encode text with a code table."""
    raise NotImplementedError


def decode(bits: str, codes: dict[str, str]) -> str:
    """Decode a bit string with a prefix-free code table."""
    raise NotImplementedError


def canonical_codes(codes: dict[str, str]) -> dict[str, str]:
    """Return the canonical code with the same code lengths."""
    raise NotImplementedError
