"""Sudoku solving and solution counting."""

_IGNORED = frozenset(" \t\r\n|-+")
_ALL = 0x3FE  # bits 1..9


class NoSolutionError(ValueError):
    """The puzzle has no solution."""


class MultipleSolutionsError(ValueError):
    """The puzzle has more than one solution."""


def _parse(puzzle: str) -> list[int]:
    cells = []
    for ch in puzzle:
        if ch in _IGNORED:
            continue
        if ch in ".0":
            cells.append(0)
        elif "1" <= ch <= "9":
            cells.append(int(ch))
        else:
            raise ValueError(f"invalid character {ch!r}")
    if len(cells) != 81:
        raise ValueError(f"expected 81 cells, got {len(cells)}")
    return cells


def _units() -> list[list[int]]:
    peers = []
    for i in range(81):
        r, c = divmod(i, 9)
        br, bc = r // 3 * 3, c // 3 * 3
        group = {r * 9 + k for k in range(9)} | {k * 9 + c for k in range(9)}
        group |= {(br + dr) * 9 + bc + dc for dr in range(3) for dc in range(3)}
        group.discard(i)
        peers.append(sorted(group))
    return peers


_PEERS = _units()


def _search(cells: list[int], limit: int) -> tuple[int, list[int] | None]:
    """Return (number of solutions found up to limit, first solution)."""
    for i, value in enumerate(cells):
        if value and any(cells[p] == value for p in _PEERS[i]):
            return 0, None
    found = 0
    first: list[int] | None = None

    def candidates(i: int) -> int:
        used = 0
        for p in _PEERS[i]:
            used |= 1 << cells[p]
        return _ALL & ~used

    def go() -> bool:
        nonlocal found, first
        best, best_mask, best_count = -1, 0, 10
        for i in range(81):
            if cells[i] == 0:
                mask = candidates(i)
                count = mask.bit_count()
                if count < best_count:
                    best, best_mask, best_count = i, mask, count
                    if count <= 1:
                        break
        if best < 0:
            found += 1
            if first is None:
                first = cells.copy()
            return found >= limit
        for digit in range(1, 10):
            if best_mask >> digit & 1:
                cells[best] = digit
                if go():
                    cells[best] = 0
                    return True
        cells[best] = 0
        return False

    go()
    return found, first


def count_solutions(puzzle: str, limit: int = 2) -> int:
    """Return the number of solutions, counting at most `limit`."""
    if limit < 1:
        raise ValueError("limit must be >= 1")
    return _search(_parse(puzzle), limit)[0]


def solve(puzzle: str) -> str:
    """Return the unique solution as 81 digits."""
    found, first = _search(_parse(puzzle), 2)
    if found == 0 or first is None:
        raise NoSolutionError("puzzle has no solution")
    if found > 1:
        raise MultipleSolutionsError("puzzle has more than one solution")
    return "".join(map(str, first))
