"""Caesar cipher."""

import string


def _shift_char(ch: str, shift: int) -> str:
    for alphabet in (string.ascii_lowercase, string.ascii_uppercase):
        idx = alphabet.find(ch)
        if idx >= 0:
            return alphabet[(idx + shift) % 26]
    return ch


def encrypt(text: str, shift: int) -> str:
    """Shift ASCII letters forward by `shift`, preserving case."""
    return "".join(_shift_char(ch, shift) for ch in text)


def decrypt(text: str, shift: int) -> str:
    """Undo `encrypt` with the same shift."""
    return encrypt(text, -shift)


def find_shift(plain: str, cipher: str) -> int | None:
    """Return the smallest shift in 0..25 turning `plain` into `cipher`, or None."""
    if len(plain) != len(cipher):
        return None
    for shift in range(26):
        if encrypt(plain, shift) == cipher:
            return shift
    return None
