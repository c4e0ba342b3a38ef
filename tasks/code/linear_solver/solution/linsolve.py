"""Exact linear algebra over the rationals."""

from fractions import Fraction

Number = int | Fraction
Matrix = list[list[Number]]


class SingularMatrixError(ValueError):
    """The matrix is not invertible."""


def _copy(matrix: Matrix) -> list[list[Fraction]]:
    if any(len(row) != len(matrix[0]) for row in matrix):
        raise ValueError("rows must have equal length")
    return [[Fraction(x) for x in row] for row in matrix]


def _square(matrix: Matrix) -> list[list[Fraction]]:
    m = _copy(matrix)
    if not m or len(m) != len(m[0]):
        raise ValueError("matrix must be non-empty and square")
    return m


def _eliminate(m: list[list[Fraction]]) -> tuple[list[int], int]:
    """Reduce m in place to RREF; return (pivot columns, sign of the row permutation)."""
    pivots: list[int] = []
    sign = 1
    row = 0
    cols = len(m[0]) if m else 0
    for col in range(cols):
        pivot = next((r for r in range(row, len(m)) if m[r][col] != 0), None)
        if pivot is None:
            continue
        if pivot != row:
            m[row], m[pivot] = m[pivot], m[row]
            sign = -sign
        lead = m[row][col]
        m[row] = [x / lead for x in m[row]]
        for r in range(len(m)):
            if r != row and m[r][col] != 0:
                factor = m[r][col]
                m[r] = [x - factor * y for x, y in zip(m[r], m[row], strict=True)]
        pivots.append(col)
        row += 1
        if row == len(m):
            break
    return pivots, sign


def rref(matrix: Matrix) -> tuple[list[list[Fraction]], list[int]]:
    """Return the reduced row echelon form and the pivot columns."""
    if not matrix:
        return [], []
    m = _copy(matrix)
    pivots, _ = _eliminate(m)
    return m, pivots


def rank(matrix: Matrix) -> int:
    """Return the rank of the matrix."""
    return len(rref(matrix)[1])


def determinant(matrix: Matrix) -> Fraction:
    """Return the determinant of a non-empty square matrix."""
    m = _square(matrix)
    n = len(m)
    det = Fraction(1)
    # Plain forward elimination (tracking scale factors) is enough for the determinant.
    for col in range(n):
        pivot = next((r for r in range(col, n) if m[r][col] != 0), None)
        if pivot is None:
            return Fraction(0)
        if pivot != col:
            m[col], m[pivot] = m[pivot], m[col]
            det = -det
        det *= m[col][col]
        for r in range(col + 1, n):
            if m[r][col] != 0:
                factor = m[r][col] / m[col][col]
                m[r] = [x - factor * y for x, y in zip(m[r], m[col], strict=True)]
    return det


def inverse(matrix: Matrix) -> list[list[Fraction]]:
    """Return the inverse of a non-empty square matrix."""
    m = _square(matrix)
    n = len(m)
    augmented = [row + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(m)]
    pivots, _ = _eliminate(augmented)
    if pivots[:n] != list(range(n)):
        raise SingularMatrixError("matrix is singular")
    return [row[n:] for row in augmented]


def solve(a: Matrix, b: list[Number]) -> tuple[list[Fraction], list[list[Fraction]]] | None:
    """Return (particular solution, null-space basis) of a x = b, or None if inconsistent."""
    m = _copy(a) if a else []
    if not m or not m[0] or len(b) != len(m):
        raise ValueError("a must be m x n with m, n >= 1 and b must have m entries")
    n = len(m[0])
    augmented = [row + [Fraction(value)] for row, value in zip(m, b, strict=True)]
    pivots, _ = _eliminate(augmented)
    if n in pivots:  # a pivot in the right-hand-side column: 0 = 1
        return None
    free = [c for c in range(n) if c not in pivots]
    particular = [Fraction(0)] * n
    for row, col in enumerate(pivots):
        particular[col] = augmented[row][n]
    basis = []
    for f in free:
        vector = [Fraction(0)] * n
        vector[f] = Fraction(1)
        for row, col in enumerate(pivots):
            vector[col] = -augmented[row][f]
        basis.append(vector)
    return particular, basis
