"""Caesar cipher."""


def encrypt(text: str, shift: int) -> str:
    """Shift ASCII letters forward by `shift`, preserving case."""
    raise NotImplementedError


def decrypt(text: str, shift: int) -> str:
    """Undo `encrypt` with the same shift."""
    raise NotImplementedError


def find_shift(plain: str, cipher: str) -> int | None:
    """Return the smallest shift in 0..25 turning `plain` into `cipher`, or None."""
    raise NotImplementedError
