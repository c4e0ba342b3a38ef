"""A bank account with validation."""

from __future__ import annotations


class InsufficientFundsError(Exception):
    """Raised when an account cannot cover a withdrawal or transfer."""


class Account:
    """A single-owner account holding an integer number of cents."""

    def __init__(self, owner: str, balance: int = 0) -> None:
        """Open an account with a non-negative opening balance."""
        raise NotImplementedError

    @property
    def balance(self) -> int:
        """The current balance in cents."""
        raise NotImplementedError

    def deposit(self, amount: int) -> int:
        """Add a positive amount; return the new balance."""
        raise NotImplementedError

    def withdraw(self, amount: int) -> int:
        """Remove a positive amount; return the new balance."""
        raise NotImplementedError

    def transfer(self, other: Account, amount: int) -> None:
        """Move a positive amount from this account to `other`."""
        raise NotImplementedError

    def history(self) -> list[tuple[str, int, int]]:
        """Return (kind, amount, balance_after) for each successful operation."""
        raise NotImplementedError
