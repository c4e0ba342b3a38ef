from sudoku import MultipleSolutionsError, NoSolutionError, count_solutions, solve

PUZZLES = [
    ("...6.9...3.157...6.8.3......2......7.9.7..5.8..3....9...4.3...9.5...4...2....8...",
     "572689143341572986689341275825496317496713528713825694164237859958164732237958461"),
    (".6.3.97.57.....4.9...2........1.35......5287........13...5.738..........6..8....4",
     "168349725725618439439275168876193542913452876542786913294567381381924657657831294"),
    ("2.....8..384.......6..3..5....2..4.86..........9..51...3....96...7.....549.8.....",
     "275196843384527619961438752753261498612984537849375126538712964127649385496853271"),
]


def _is_valid_solution(grid, puzzle):
    assert len(grid) == 81 and set(grid) <= set("123456789")
    rows = [grid[r * 9:(r + 1) * 9] for r in range(9)]
    cols = ["".join(row[c] for row in rows) for c in range(9)]
    boxes = ["".join(rows[br + dr][bc + dc] for dr in range(3) for dc in range(3))
             for br in (0, 3, 6) for bc in (0, 3, 6)]
    clues = [ch for ch in puzzle if ch in "0123456789."]
    givens_kept = all(c in ".0" or c == g for c, g in zip(clues, grid, strict=True))
    return givens_kept and all(sorted(unit) == list("123456789") for unit in rows + cols + boxes)


def _raises(exc_type, fn, *args):
    try:
        fn(*args)
    except exc_type:
        return True
    return False


def test_solves_minimal_puzzles():
    for puzzle, expected in PUZZLES:
        got = solve(puzzle)
        assert got == expected
        assert _is_valid_solution(got, puzzle)


def test_zero_as_empty_and_pretty_format():
    puzzle, expected = PUZZLES[0]
    assert solve(puzzle.replace(".", "0")) == expected
    rows = [puzzle[r * 9:(r + 1) * 9] for r in range(9)]
    pretty = []
    for r, row in enumerate(rows):
        if r in (3, 6):
            pretty.append("------+-------+------")
        pretty.append(" | ".join(" ".join(row[c:c + 3]) for c in (0, 3, 6)))
    assert solve("\n".join(pretty) + "\n") == expected


def test_already_solved_grid():
    _, full = PUZZLES[1]
    assert solve(full) == full
    assert count_solutions(full) == 1


def test_count_solutions():
    for puzzle, _ in PUZZLES:
        assert count_solutions(puzzle) == 1
        assert count_solutions(puzzle, limit=1) == 1
    assert count_solutions("." * 81, limit=5) == 5
    assert count_solutions("." * 81) == 2
    puzzle = PUZZLES[0][0]
    first_given = next(i for i, ch in enumerate(puzzle) if ch != ".")
    loosened = puzzle[:first_given] + "." + puzzle[first_given + 1:]
    assert count_solutions(loosened, limit=3) >= 2


def test_multiple_solutions_error():
    assert _raises(MultipleSolutionsError, solve, "." * 81)
    assert issubclass(MultipleSolutionsError, ValueError)


def test_no_solution():
    conflict = "55" + "." * 79
    assert _raises(NoSolutionError, solve, conflict)
    assert count_solutions(conflict) == 0
    dead_end = "12345678." + "........9" + "." * 63
    assert _raises(NoSolutionError, solve, dead_end)
    assert count_solutions(dead_end, limit=10) == 0
    assert issubclass(NoSolutionError, ValueError)


def test_malformed_input():
    assert _raises(ValueError, solve, "." * 80)
    assert _raises(ValueError, solve, "." * 82)
    assert _raises(ValueError, solve, "x" + "." * 80)
    assert _raises(ValueError, count_solutions, "." * 81, 0)
    assert _raises(ValueError, count_solutions, "a" * 81)
