import random

from paths import all_distances, shortest_path, shortest_path_within

EDGES = [
    ("a", "b", 4), ("a", "c", 2), ("c", "b", 1), ("b", "d", 5),
    ("c", "d", 8), ("c", "e", 10), ("d", "e", 2), ("e", "f", 3), ("x", "y", 1),
]


def _brute(edges, start, goal, directed, max_edges=None):
    adj = {}
    for u, v, w in edges:
        adj.setdefault(u, []).append((v, w))
        if not directed:
            adj.setdefault(v, []).append((u, w))
    best = None
    stack = [(start, 0, [start])]
    while stack:
        node, cost, path = stack.pop()
        if node == goal:
            key = (cost, len(path), path)
            if best is None or key < best:
                best = key
            continue
        if max_edges is not None and len(path) - 1 == max_edges:
            continue
        for nxt, w in adj.get(node, ()):
            if nxt not in path:
                stack.append((nxt, cost + w, path + [nxt]))
    return None if best is None else (best[0], best[2])


def _random_graph(rng, n, m):
    names = [f"n{i}" for i in range(n)]
    return [(rng.choice(names), rng.choice(names), rng.randint(0, 4)) for _ in range(m)]


def test_basic_directed():
    assert shortest_path(EDGES, "a", "f") == (13, ["a", "c", "b", "d", "e", "f"])
    assert shortest_path(EDGES, "a", "b") == (3, ["a", "c", "b"])
    assert shortest_path(EDGES, "f", "a") is None
    assert shortest_path(EDGES, "a", "y") is None
    assert shortest_path(EDGES, "a", "a") == (0, ["a"])
    assert shortest_path(EDGES, "zz", "zz") == (0, ["zz"])
    assert shortest_path(EDGES, "zz", "a") is None


def test_undirected():
    assert shortest_path(EDGES, "f", "a", directed=False) == (13, ["f", "e", "d", "b", "c", "a"])
    assert shortest_path(EDGES, "y", "x", directed=False) == (1, ["y", "x"])


def test_tie_breaking():
    edges = [("s", "b", 1), ("s", "a", 1), ("a", "t", 1), ("b", "t", 1)]
    assert shortest_path(edges, "s", "t") == (2, ["s", "a", "t"])
    edges = [("s", "m", 1), ("m", "t", 1), ("s", "z", 2), ("z", "t", 0), ("s", "t", 2)]
    assert shortest_path(edges, "s", "t") == (2, ["s", "t"])
    edges = [("s", "q", 0), ("q", "t", 1), ("s", "b", 0), ("b", "c", 0), ("c", "t", 1)]
    assert shortest_path(edges, "s", "t") == (1, ["s", "q", "t"])
    edges = [("s", "b", 1), ("b", "a", 1), ("s", "a", 2), ("a", "t", 1), ("s", "c", 1), ("c", "t", 2)]
    assert shortest_path(edges, "s", "t") == (3, ["s", "a", "t"])


def test_parallel_edges_self_loops_and_floats():
    edges = [("a", "b", 5), ("a", "b", 2.5), ("b", "b", 0), ("b", "c", 0.5)]
    assert shortest_path(edges, "a", "c") == (3.0, ["a", "b", "c"])


def test_all_distances():
    assert all_distances(EDGES, "a") == {"a": 0, "b": 3, "c": 2, "d": 8, "e": 10, "f": 13}
    assert all_distances(EDGES, "x") == {"x": 0, "y": 1}
    assert all_distances(EDGES, "y", directed=False) == {"y": 0, "x": 1}


def test_negative_weight_rejected():
    bad = [("a", "b", 1), ("b", "c", -1)]
    for call in (lambda: shortest_path(bad, "a", "c"), lambda: all_distances(bad, "a"),
                 lambda: shortest_path_within(bad, "a", "c", 3)):
        try:
            call()
        except ValueError:
            continue
        raise AssertionError("expected ValueError")


def test_hop_limit():
    edges = [("a", "b", 1), ("b", "c", 1), ("c", "d", 1), ("a", "d", 10), ("a", "c", 5)]
    assert shortest_path_within(edges, "a", "d", 3) == (3, ["a", "b", "c", "d"])
    assert shortest_path_within(edges, "a", "d", 2) == (6, ["a", "c", "d"])
    assert shortest_path_within(edges, "a", "d", 1) == (10, ["a", "d"])
    assert shortest_path_within(edges, "a", "d", 0) is None
    assert shortest_path_within(edges, "d", "a", 5) is None
    assert shortest_path_within(edges, "a", "a", 0) == (0, ["a"])
    try:
        shortest_path_within(edges, "a", "d", -1)
    except ValueError:
        return
    raise AssertionError("expected ValueError")


def test_random_against_brute_force():
    rng = random.Random(77)
    for trial in range(150):
        edges = _random_graph(rng, 6, rng.randint(0, 14))
        directed = trial % 2 == 0
        s, t = f"n{rng.randrange(6)}", f"n{rng.randrange(6)}"
        if s == t:
            continue
        assert shortest_path(edges, s, t, directed) == _brute(edges, s, t, directed), (edges, s, t)
        k = rng.randint(0, 4)
        assert shortest_path_within(edges, s, t, k, directed) == _brute(edges, s, t, directed, k)


def test_large_grid_is_fast():
    n = 40
    edges = []
    for r in range(n):
        for c in range(n):
            if c + 1 < n:
                edges.append((f"{r},{c}", f"{r},{c + 1}", (r * 7 + c * 3) % 5 + 1))
            if r + 1 < n:
                edges.append((f"{r},{c}", f"{r + 1},{c}", (r * 3 + c * 7) % 5 + 1))
    cost, path = shortest_path(edges, "0,0", f"{n - 1},{n - 1}", directed=False)
    assert path[0] == "0,0" and path[-1] == f"{n - 1},{n - 1}"
    weights = {}
    for u, v, w in edges:
        weights[(u, v)] = weights[(v, u)] = w
    assert cost == sum(weights[(a, b)] for a, b in zip(path, path[1:], strict=False))
    assert len(all_distances(edges, "0,0", directed=False)) == n * n
