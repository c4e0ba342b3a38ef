from dsu import DisjointSet, count_regions


def _raises(exc_type, fn, *args):
    try:
        fn(*args)
    except exc_type:
        return True
    return False


def test_singletons():
    d = DisjointSet([1, 2, 3, 2])
    assert d.count() == 3
    assert d.find(2) == 2
    assert not d.connected(1, 2)
    assert d.size(3) == 1


def test_union_and_connected():
    d = DisjointSet("abcde")
    assert d.union("a", "b") is True
    assert d.union("c", "d") is True
    assert d.union("b", "a") is False
    assert d.union("a", "d") is True
    assert d.connected("b", "c")
    assert not d.connected("a", "e")
    assert d.count() == 2
    assert d.size("c") == 4
    assert d.find("a") == d.find("d")


def test_add():
    d = DisjointSet()
    assert d.add("x") is True
    assert d.add("x") is False
    d.add("y")
    d.union("x", "y")
    assert d.add("y") is False
    assert d.size("x") == 2 and d.count() == 1


def test_unknown_elements():
    d = DisjointSet([1])
    assert _raises(KeyError, d.find, 2)
    assert _raises(KeyError, d.union, 1, 2)
    assert _raises(KeyError, d.connected, 3, 1)
    assert _raises(KeyError, d.size, 9)


def test_groups():
    d = DisjointSet([5, 3, 9, 1, 7])
    d.union(9, 1)
    d.union(7, 3)
    assert d.groups() == [[1, 9], [3, 7], [5]]
    assert DisjointSet().groups() == []


def test_long_chain_is_fast_and_iterative():
    n = 20_000
    d = DisjointSet(range(n))
    for i in range(n - 1):
        d.union(i, i + 1)
    assert d.count() == 1
    assert d.size(0) == n
    assert all(d.find(i) == d.find(0) for i in range(0, n, 997))


def test_count_regions():
    grid = [
        "##..#",
        "#...#",
        "..#..",
        "#.###",
    ]
    assert count_regions(grid) == 4
    assert count_regions([]) == 0
    assert count_regions(["....", "...."]) == 0
    assert count_regions(["#.#", ".#.", "#.#"]) == 5
    assert count_regions(["###", "#.#", "###"]) == 1


def test_count_regions_ragged():
    assert _raises(ValueError, count_regions, ["##", "#"])
