import random
from fractions import Fraction as F
from itertools import permutations

from linsolve import SingularMatrixError, determinant, inverse, rank, rref, solve


def _raises(exc_type, fn, *args):
    try:
        fn(*args)
    except exc_type:
        return True
    return False


def _matmul_vec(a, x):
    return [sum(F(ai) * xi for ai, xi in zip(row, x, strict=True)) for row in a]


def _leibniz(m):
    n = len(m)
    total = F(0)
    for perm in permutations(range(n)):
        inversions = sum(perm[i] > perm[j] for i in range(n) for j in range(i + 1, n))
        term = F(-1) ** inversions
        for i in range(n):
            term *= m[i][perm[i]]
        total += term
    return total


def test_rref_example():
    m = [[1, 2, -1, -4], [2, 3, -1, -11], [-2, 0, -3, 22]]
    reduced, pivots = rref(m)
    assert reduced == [[1, 0, 0, -8], [0, 1, 0, 1], [0, 0, 1, -2]]
    assert pivots == [0, 1, 2]
    assert all(isinstance(x, F) for row in reduced for x in row)
    assert m == [[1, 2, -1, -4], [2, 3, -1, -11], [-2, 0, -3, 22]]


def test_rref_rank_deficient_and_edge_cases():
    reduced, pivots = rref([[0, 2, 4], [0, 1, 2], [0, 0, 0]])
    assert reduced == [[0, 1, 2], [0, 0, 0], [0, 0, 0]] and pivots == [1]
    assert rref([]) == ([], [])
    assert rref([[0, 0], [0, 0]]) == ([[0, 0], [0, 0]], [])
    assert rref([[F(1, 2), F(1, 3)]]) == ([[1, F(2, 3)]], [0])
    assert rank([[1, 2], [2, 4], [3, 6]]) == 1
    assert rank([[1, 0, 0], [0, 1, 0]]) == 2
    assert _raises(ValueError, rref, [[1, 2], [3]])


def test_determinant():
    assert determinant([[4]]) == 4
    assert determinant([[1, 2], [3, 4]]) == -2
    assert determinant([[0, 1], [1, 0]]) == -1
    assert determinant([[2, 0, 1], [1, 3, 2], [1, 1, 2]]) == 6
    assert determinant([[2, 0, 1], [1, 3, 2], [1, 1, 1]]) == 0
    assert determinant([[1, 2], [2, 4]]) == 0
    assert determinant([[F(1, 2), F(1, 3)], [F(1, 4), F(1, 5)]]) == F(1, 60)
    rng = random.Random(3)
    for n in range(1, 6):
        m = [[rng.randint(-5, 5) for _ in range(n)] for _ in range(n)]
        assert determinant(m) == _leibniz(m)
    for bad in ([], [[1, 2]], [[1, 2], [3, 4], [5, 6]]):
        assert _raises(ValueError, determinant, bad)


def test_inverse():
    inv = inverse([[4, 7], [2, 6]])
    assert inv == [[F(3, 5), F(-7, 10)], [F(-1, 5), F(2, 5)]]
    rng = random.Random(8)
    for n in (1, 3, 6):
        while True:
            m = [[rng.randint(-4, 4) for _ in range(n)] for _ in range(n)]
            if determinant(m) != 0:
                break
        inv = inverse(m)
        for i in range(n):
            for j in range(n):
                assert sum(F(m[i][k]) * inv[k][j] for k in range(n)) == (1 if i == j else 0)


def test_inverse_singular():
    assert _raises(SingularMatrixError, inverse, [[1, 2], [2, 4]])
    assert _raises(SingularMatrixError, inverse, [[0]])
    assert _raises(ValueError, inverse, [[1, 2, 3], [4, 5, 6]])
    assert issubclass(SingularMatrixError, ValueError)


def test_solve_unique():
    a = [[2, 1, -1], [-3, -1, 2], [-2, 1, 2]]
    assert solve(a, [8, -11, -3]) == ([2, 3, -1], [])
    assert solve([[3]], [1]) == ([F(1, 3)], [])


def test_solve_underdetermined_canonical_basis():
    a = [[1, 2, 0, 3], [0, 0, 1, 4]]
    particular, basis = solve(a, [5, 6])
    assert particular == [5, 0, 6, 0]
    assert basis == [[-2, 1, 0, 0], [-3, 0, -4, 1]]
    particular, basis = solve([[0, 0]], [0])
    assert particular == [0, 0] and basis == [[1, 0], [0, 1]]


def test_solve_inconsistent_and_errors():
    assert solve([[1, 1], [1, 1]], [1, 2]) is None
    assert solve([[0, 0]], [3]) is None
    assert _raises(ValueError, solve, [[1, 2]], [1, 2])
    assert _raises(ValueError, solve, [], [])
    assert _raises(ValueError, solve, [[]], [1])


def test_solve_random_systems():
    rng = random.Random(17)
    for _ in range(40):
        rows, cols = rng.randint(1, 6), rng.randint(1, 6)
        a = [[rng.randint(-3, 3) for _ in range(cols)] for _ in range(rows)]
        x_true = [F(rng.randint(-5, 5), rng.randint(1, 3)) for _ in range(cols)]
        b = _matmul_vec(a, x_true)
        particular, basis = solve(a, b)
        assert _matmul_vec(a, particular) == b
        assert len(basis) == cols - rank(a)
        for v in basis:
            assert _matmul_vec(a, v) == [0] * rows


def test_larger_system_is_fast():
    rng = random.Random(1)
    n = 30
    a = [[rng.randint(-9, 9) for _ in range(n)] for _ in range(n)]
    x = [F(rng.randint(-9, 9)) for _ in range(n)]
    result = solve(a, _matmul_vec(a, x))
    assert result == (x, [])
