"""Topological sorting."""

import heapq
from collections.abc import Iterable


class CycleError(ValueError):
    """Raised when the dependency graph has a cycle; see the `cycle` attribute."""

    def __init__(self, cycle: list[str]) -> None:
        super().__init__(f"cycle: {' -> '.join(cycle)}")
        self.cycle = cycle


def _normalise(deps: dict[str, Iterable[str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for node, prereqs in deps.items():
        graph.setdefault(node, set()).update(prereqs)
        for p in graph[node]:
            graph.setdefault(p, set())
    return graph


def _find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """Return a cycle; only called when one is known to exist."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        iters = [iter(sorted(graph[start]))]
        state[start] = 1
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(sorted(graph[nxt])))
    raise AssertionError("no cycle found")


def _kahn(graph: dict[str, set[str]]) -> list[str]:
    dependents: dict[str, list[str]] = {node: [] for node in graph}
    remaining = {node: len(prereqs) for node, prereqs in graph.items()}
    for node, prereqs in graph.items():
        for p in prereqs:
            dependents[p].append(node)
    ready = [node for node, n in remaining.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for dep in dependents[node]:
            remaining[dep] -= 1
            if remaining[dep] == 0:
                heapq.heappush(ready, dep)
    if len(order) != len(graph):
        raise CycleError(_find_cycle(graph))
    return order


def topo_order(deps: dict[str, Iterable[str]]) -> list[str]:
    """Return the alphabetically smallest topological order."""
    return _kahn(_normalise(deps))


def levels(deps: dict[str, Iterable[str]]) -> list[list[str]]:
    """Group nodes by the length of their longest prerequisite chain."""
    graph = _normalise(deps)
    level: dict[str, int] = {}
    for node in _kahn(graph):
        level[node] = 1 + max((level[p] for p in graph[node]), default=-1)
    grouped: list[list[str]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for node in sorted(level):
        grouped[level[node]].append(node)
    return grouped
