"""Disjoint-set union."""

from collections.abc import Hashable, Iterable


class DisjointSet:
    """Union-find over hashable elements."""

    def __init__(self, elements: Iterable[Hashable] = ()) -> None:
        """Create singleton sets for `elements`."""
        raise NotImplementedError

    def add(self, x: Hashable) -> bool:
        """Add x as a singleton; return False if it already exists."""
        raise NotImplementedError

    def find(self, x: Hashable) -> Hashable:
        """Return the representative of x's set."""
        raise NotImplementedError

    def union(self, a: Hashable, b: Hashable) -> bool:
        """Merge the sets of a and b; return True if they were separate."""
        raise NotImplementedError

    def connected(self, a: Hashable, b: Hashable) -> bool:
        """Return True if a and b are in the same set."""
        raise NotImplementedError

    def size(self, x: Hashable) -> int:
        """Return the size of x's set."""
        raise NotImplementedError

    def count(self) -> int:
        """Return the number of disjoint sets."""
        raise NotImplementedError

    def groups(self) -> list[list[Hashable]]:
        """Return all sets as sorted lists, ordered by their smallest element."""
        raise NotImplementedError


def count_regions(grid: list[str]) -> int:
    """Count 4-connected regions of '#' cells."""
    raise NotImplementedError
