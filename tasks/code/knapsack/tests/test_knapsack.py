import itertools
import random

from knapsack import best_subset, unbounded_value


def _brute(items, capacity):
    best = None
    for r in range(len(items) + 1):
        for combo in itertools.combinations(range(len(items)), r):
            w = sum(items[i][0] for i in combo)
            if w > capacity:
                continue
            v = sum(items[i][1] for i in combo)
            key = (-v, w, list(combo))
            if best is None or key < best:
                best = key
    return -best[0], best[2]


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_simple():
    items = [(5, 10), (4, 40), (6, 30), (3, 50)]
    assert best_subset(items, 10) == (90, [1, 3])


def test_empty_and_nothing_fits():
    assert best_subset([], 10) == (0, [])
    assert best_subset([(5, 7)], 4) == (0, [])
    assert best_subset([(5, 7)], 0) == (0, [])


def test_tie_prefers_lighter():
    items = [(4, 10), (2, 10), (3, 10)]
    assert best_subset(items, 4) == (10, [1])


def test_tie_prefers_lexicographically_smallest():
    items = [(2, 5), (2, 5), (2, 5)]
    assert best_subset(items, 4) == (10, [0, 1])
    items = [(3, 6), (1, 2), (2, 4), (3, 6)]
    assert best_subset(items, 3) == (6, [0])


def test_zero_value_items_not_taken():
    assert best_subset([(1, 0), (2, 3), (1, 0)], 10) == (3, [1])


def test_random_against_brute_force():
    rng = random.Random(2024)
    for _ in range(120):
        items = [(rng.randint(1, 6), rng.randint(0, 8)) for _ in range(rng.randint(0, 8))]
        capacity = rng.randint(0, 15)
        assert best_subset(items, capacity) == _brute(items, capacity), (items, capacity)


def test_larger_instance():
    rng = random.Random(11)
    items = [(rng.randint(1, 50), rng.randint(1, 100)) for _ in range(100)]
    value, chosen = best_subset(items, 1000)
    assert sum(items[i][0] for i in chosen) <= 1000
    assert sum(items[i][1] for i in chosen) == value
    assert chosen == sorted(set(chosen))
    assert value >= sum(v for _, v in items) * 0.5


def test_unbounded():
    assert unbounded_value([(5, 10), (4, 40), (6, 30), (3, 50)], 10) == 150
    assert unbounded_value([(2, 3), (3, 5)], 7) == 11
    assert unbounded_value([], 100) == 0
    assert unbounded_value([(4, 1)], 3) == 0


def test_validation():
    assert _raises_value_error(best_subset, [(0, 5)], 3)
    assert _raises_value_error(best_subset, [(1, -1)], 3)
    assert _raises_value_error(best_subset, [(1, 1)], -1)
    assert _raises_value_error(unbounded_value, [(0, 1)], 3)
    assert _raises_value_error(unbounded_value, [], -2)
