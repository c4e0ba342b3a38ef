"""Sudoku solving and solution counting."""


class NoSolutionError(ValueError):
    """The puzzle has no solution."""


class MultipleSolutionsError(ValueError):
    """The puzzle has more than one solution."""


def count_solutions(puzzle: str, limit: int = 2) -> int:
    """Return the number of solutions, counting at most `limit`."""
    raise NotImplementedError


def solve(puzzle: str) -> str:
    """Return the unique solution as 81 digits."""
    raise NotImplementedError
