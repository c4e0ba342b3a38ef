"""A small spreadsheet engine."""

from fractions import Fraction


class Sheet:
    """A grid of cells with numbers, text and formulas."""

    def __init__(self) -> None:
        """Create an empty sheet."""
        raise NotImplementedError

    def set(self, cell: str, content: str) -> None:
        """Store content in cell; raise ValueError for an invalid formula or cell name."""
        raise NotImplementedError

    def get(self, cell: str) -> Fraction | str | None:
        """Return the current value of cell."""
        raise NotImplementedError
