"""Shortest paths in weighted graphs."""

from collections.abc import Iterable

Number = int | float
Edge = tuple[str, str, Number]


def shortest_path(
    edges: Iterable[Edge], start: str, goal: str, directed: bool = True
) -> tuple[Number, list[str]] | None:
    """Return the canonical cheapest path from start to goal, or None."""
    raise NotImplementedError


def all_distances(edges: Iterable[Edge], start: str, directed: bool = True) -> dict[str, Number]:
    """Return the cheapest cost from start to every reachable node."""
    raise NotImplementedError


def shortest_path_within(
    edges: Iterable[Edge], start: str, goal: str, max_edges: int, directed: bool = True
) -> tuple[Number, list[str]] | None:
    """Return the canonical cheapest path using at most max_edges edges, or None."""
    raise NotImplementedError
