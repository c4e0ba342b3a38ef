"""Integer base conversion."""

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _check_base(base: int) -> None:
    if not 2 <= base <= 36:
        raise ValueError(f"base must be in 2..36, got {base}")


def to_base(n: int, base: int) -> str:
    """Return n written in `base` (2..36) with lowercase digits."""
    _check_base(base)
    if n == 0:
        return "0"
    sign = "-" if n < 0 else ""
    n = abs(n)
    out = []
    while n:
        n, digit = divmod(n, base)
        out.append(_DIGITS[digit])
    return sign + "".join(reversed(out))


def from_base(text: str, base: int) -> int:
    """Parse a strictly formatted number written in `base` (2..36)."""
    _check_base(base)
    negative = text.startswith("-")
    body = text[1:] if negative else text
    if not body:
        raise ValueError(f"no digits in {text!r}")
    value = 0
    for ch in body.lower():
        digit = _DIGITS.find(ch)
        if digit < 0 or digit >= base or not ch.isascii():
            raise ValueError(f"invalid digit {ch!r} for base {base}")
        value = value * base + digit
    return -value if negative else value
