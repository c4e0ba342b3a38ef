"""A bank account with validation."""

from __future__ import annotations


class InsufficientFundsError(Exception):
    """Raised when an account cannot cover a withdrawal or transfer."""


def _is_valid_amount(amount: object) -> bool:
    return isinstance(amount, int) and not isinstance(amount, bool) and amount > 0


class Account:
    """A single-owner account holding an integer number of cents."""

    def __init__(self, owner: str, balance: int = 0) -> None:
        """Open an account with a non-negative opening balance."""
        if not isinstance(balance, int) or isinstance(balance, bool) or balance < 0:
            raise ValueError("opening balance must be a non-negative int")
        self.owner = owner
        self._balance = balance
        self._history: list[tuple[str, int, int]] = []

    @property
    def balance(self) -> int:
        """The current balance in cents."""
        return self._balance

    def _apply(self, kind: str, delta: int) -> int:
        self._balance += delta
        self._history.append((kind, abs(delta), self._balance))
        return self._balance

    def _check_withdrawal(self, amount: int) -> None:
        if not _is_valid_amount(amount):
            raise ValueError(f"invalid amount {amount!r}")
        if amount > self._balance:
            raise InsufficientFundsError(f"balance {self._balance} cannot cover {amount}")

    def deposit(self, amount: int) -> int:
        """Add a positive amount; return the new balance."""
        if not _is_valid_amount(amount):
            raise ValueError(f"invalid amount {amount!r}")
        return self._apply("deposit", amount)

    def withdraw(self, amount: int) -> int:
        """Remove a positive amount; return the new balance."""
        self._check_withdrawal(amount)
        return self._apply("withdraw", -amount)

    def transfer(self, other: Account, amount: int) -> None:
        """Move a positive amount from this account to `other`."""
        if other is self:
            raise ValueError("cannot transfer to the same account")
        self._check_withdrawal(amount)
        self._apply("transfer_out", -amount)
        other._apply("transfer_in", amount)

    def history(self) -> list[tuple[str, int, int]]:
        """Return (kind, amount, balance_after) for each successful operation."""
        return list(self._history)
