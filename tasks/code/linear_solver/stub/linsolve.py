"""Exact linear algebra over the rationals."""

from fractions import Fraction

Number = int | Fraction
Matrix = list[list[Number]]


class SingularMatrixError(ValueError):
    """The matrix is not invertible."""


def rref(matrix: Matrix) -> tuple[list[list[Fraction]], list[int]]:
    """Return the reduced row echelon form and the pivot columns."""
    raise NotImplementedError


def rank(matrix: Matrix) -> int:
    """Return the rank of the matrix."""
    raise NotImplementedError


def determinant(matrix: Matrix) -> Fraction:
    """Return the determinant of a non-empty square matrix."""
    raise NotImplementedError


def inverse(matrix: Matrix) -> list[list[Fraction]]:
    """Return the inverse of a non-empty square matrix."""
    raise NotImplementedError


def solve(a: Matrix, b: list[Number]) -> tuple[list[Fraction], list[list[Fraction]]] | None:
    """Return (particular solution, null-space basis) of a x = b, or None if inconsistent."""
    raise NotImplementedError
