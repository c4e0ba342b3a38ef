"""Integer base conversion."""


def to_base(n: int, base: int) -> str:
    """Return n written in `base` (2..36) with lowercase digits."""
    raise NotImplementedError


def from_base(text: str, base: int) -> int:
    """Parse a strictly formatted number written in `base` (2..36)."""
    raise NotImplementedError
