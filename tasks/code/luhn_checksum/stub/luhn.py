"""Luhn checksum."""


def is_valid(number: str) -> bool:
    """Return True if the (space-separated) digit string passes the Luhn check."""
    raise NotImplementedError


def check_digit(partial: str) -> str:
    """Return the digit that makes `partial` + digit Luhn-valid."""
    raise NotImplementedError
