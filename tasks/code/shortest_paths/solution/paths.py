"""Shortest paths in weighted graphs."""

import heapq
from collections.abc import Iterable

Number = int | float
Edge = tuple[str, str, Number]


def _adjacency(edges: Iterable[Edge], directed: bool) -> dict[str, list[tuple[str, Number]]]:
    graph: dict[str, list[tuple[str, Number]]] = {}
    for u, v, w in edges:
        if w < 0:
            raise ValueError(f"negative weight on edge {u}->{v}")
        graph.setdefault(u, []).append((v, w))
        graph.setdefault(v, [])
        if not directed:
            graph[v].append((u, w))
    return graph


def _search(
    graph: dict[str, list[tuple[str, Number]]], start: str, goal: str | None, max_edges: int | None
) -> dict[str, tuple[Number, int, tuple[str, ...]]]:
    """Dijkstra over labels (cost, hops, path); states are (node, hops) when hops are limited."""
    heap: list[tuple[Number, int, tuple[str, ...]]] = [(0, 0, (start,))]
    settled: dict[str, tuple[Number, int, tuple[str, ...]]] = {}
    seen_states: set[tuple[str, int | None]] = set()
    while heap:
        cost, hops, path = heapq.heappop(heap)
        node = path[-1]
        state = (node, hops if max_edges is not None else None)
        if state in seen_states:
            continue
        seen_states.add(state)
        settled.setdefault(node, (cost, hops, path))
        if node == goal:
            break
        if max_edges is not None and hops == max_edges:
            continue
        for nxt, weight in graph.get(node, ()):
            nxt_state = (nxt, hops + 1 if max_edges is not None else None)
            if nxt_state not in seen_states:
                heapq.heappush(heap, (cost + weight, hops + 1, path + (nxt,)))
    return settled


def shortest_path(
    edges: Iterable[Edge], start: str, goal: str, directed: bool = True
) -> tuple[Number, list[str]] | None:
    """Return the canonical cheapest path from start to goal, or None."""
    graph = _adjacency(edges, directed)
    if start == goal:
        return 0, [start]
    found = _search(graph, start, goal, None).get(goal)
    return None if found is None else (found[0], list(found[2]))


def all_distances(edges: Iterable[Edge], start: str, directed: bool = True) -> dict[str, Number]:
    """Return the cheapest cost from start to every reachable node."""
    graph = _adjacency(edges, directed)
    return {node: label[0] for node, label in _search(graph, start, None, None).items()}


def shortest_path_within(
    edges: Iterable[Edge], start: str, goal: str, max_edges: int, directed: bool = True
) -> tuple[Number, list[str]] | None:
    """Return the canonical cheapest path using at most max_edges edges, or None."""
    if max_edges < 0:
        raise ValueError("max_edges must be non-negative")
    graph = _adjacency(edges, directed)
    if start == goal:
        return 0, [start]
    found = _search(graph, start, goal, max_edges).get(goal)
    return None if found is None else (found[0], list(found[2]))
