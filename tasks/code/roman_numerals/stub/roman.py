"""Roman numerals."""


def to_roman(n: int) -> str:
    """Return the canonical Roman numeral for 1 <= n <= 3999."""
    raise NotImplementedError


def from_roman(numeral: str) -> int:
    """Parse a canonical Roman numeral."""
    raise NotImplementedError
