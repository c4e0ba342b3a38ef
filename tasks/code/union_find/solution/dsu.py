"""Disjoint-set union."""

from collections.abc import Hashable, Iterable


class DisjointSet:
    """Union-find over hashable elements."""

    def __init__(self, elements: Iterable[Hashable] = ()) -> None:
        """Create singleton sets for `elements`."""
        self._parent: dict[Hashable, Hashable] = {}
        self._size: dict[Hashable, int] = {}
        self._count = 0
        for x in elements:
            self.add(x)

    def add(self, x: Hashable) -> bool:
        """Add x as a singleton; return False if it already exists."""
        if x in self._parent:
            return False
        self._parent[x] = x
        self._size[x] = 1
        self._count += 1
        return True

    def find(self, x: Hashable) -> Hashable:
        """Return the representative of x's set."""
        if x not in self._parent:
            raise KeyError(x)
        root = x
        while self._parent[root] != root:
            root = self._parent[root]
        while self._parent[x] != root:  # path compression
            self._parent[x], x = root, self._parent[x]
        return root

    def union(self, a: Hashable, b: Hashable) -> bool:
        """Merge the sets of a and b; return True if they were separate."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if self._size[ra] < self._size[rb]:
            ra, rb = rb, ra
        self._parent[rb] = ra
        self._size[ra] += self._size.pop(rb)
        self._count -= 1
        return True

    def connected(self, a: Hashable, b: Hashable) -> bool:
        """Return True if a and b are in the same set."""
        return self.find(a) == self.find(b)

    def size(self, x: Hashable) -> int:
        """Return the size of x's set."""
        return self._size[self.find(x)]

    def count(self) -> int:
        """Return the number of disjoint sets."""
        return self._count

    def groups(self) -> list[list[Hashable]]:
        """Return all sets as sorted lists, ordered by their smallest element."""
        by_root: dict[Hashable, list[Hashable]] = {}
        for x in self._parent:
            by_root.setdefault(self.find(x), []).append(x)
        return sorted((sorted(members) for members in by_root.values()), key=lambda g: g[0])


def count_regions(grid: list[str]) -> int:
    """Count 4-connected regions of '#' cells."""
    if any(len(row) != len(grid[0]) for row in grid):
        raise ValueError("rows must have equal length")
    cells = [(r, c) for r, row in enumerate(grid) for c, ch in enumerate(row) if ch == "#"]
    dsu = DisjointSet(cells)
    for r, c in cells:
        for nr, nc in ((r + 1, c), (r, c + 1)):
            if nr < len(grid) and nc < len(grid[nr]) and grid[nr][nc] == "#":
                dsu.union((r, c), (nr, nc))
    return dsu.count()
