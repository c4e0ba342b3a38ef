"""Luhn checksum."""

_DIGITS = frozenset("0123456789")


def _luhn_sum(digits: str) -> int:
    total = 0
    for position, ch in enumerate(reversed(digits), start=1):
        value = int(ch)
        if position % 2 == 0:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total


def is_valid(number: str) -> bool:
    """Return True if the (space-separated) digit string passes the Luhn check."""
    digits = number.replace(" ", "")
    if len(digits) < 2 or not set(digits) <= _DIGITS:
        return False
    return _luhn_sum(digits) % 10 == 0


def check_digit(partial: str) -> str:
    """Return the digit that makes `partial` + digit Luhn-valid."""
    digits = partial.replace(" ", "")
    if not digits or not set(digits) <= _DIGITS:
        raise ValueError(f"invalid partial number {partial!r}")
    return str((10 - _luhn_sum(digits + "0") % 10) % 10)
