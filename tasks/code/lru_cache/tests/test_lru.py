from lru import LRUCache


def test_basic_get_put():
    cache = LRUCache(2)
    assert cache.put("a", 1) is None
    assert cache.put("b", 2) is None
    assert cache.get("a") == 1
    assert cache.get("zz") is None
    assert cache.get("zz", 42) == 42
    assert len(cache) == 2


def test_eviction_order_respects_get():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    assert cache.put("c", 3) == ("b", 2)
    assert "b" not in cache
    assert cache.keys() == ["a", "c"]


def test_update_marks_used_and_never_evicts():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.put("a", 10) is None
    assert len(cache) == 2
    assert cache.put("c", 3) == ("b", 2)
    assert cache.peek("a") == 10


def test_peek_and_contains_do_not_touch():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.peek("a") == 1
    assert "a" in cache
    assert cache.peek("nope", "d") == "d"
    assert cache.put("c", 3) == ("a", 1)
    assert cache.stats() == (0, 0)


def test_stats():
    cache = LRUCache(3)
    cache.put(1, "x")
    cache.get(1)
    cache.get(2)
    cache.get(1)
    cache.get(3, "default")
    assert cache.stats() == (2, 2)


def test_capacity_one_and_none_values():
    cache = LRUCache(1)
    cache.put("k", None)
    assert "k" in cache
    assert cache.get("k", "missing") is None
    assert cache.put("j", 0) == ("k", None)
    assert cache.keys() == ["j"]


def test_invalid_capacity():
    for cap in (0, -3):
        try:
            LRUCache(cap)
        except ValueError:
            continue
        raise AssertionError("expected ValueError")


def test_long_sequence_with_pinned_key():
    cache = LRUCache(100)
    cache.put(0, "pinned")
    evicted = []
    for i in range(1, 6_000):
        gone = cache.put(i, i * i)
        if gone is not None:
            evicted.append(gone[0])
        assert cache.get(0) == "pinned"
    assert cache.keys() == list(range(5_901, 6_000)) + [0]
    assert evicted == list(range(1, 5_901))
    assert cache.stats() == (5_999, 0)
