from toposort import CycleError, levels, topo_order


def _assert_valid_cycle(deps, cycle):
    assert len(cycle) >= 2 and cycle[0] == cycle[-1]
    assert len(set(cycle[:-1])) == len(cycle) - 1
    for a, b in zip(cycle, cycle[1:], strict=False):
        assert b in set(deps.get(a, ())), (a, b)


def _cycle_of(fn, deps):
    try:
        fn(deps)
    except CycleError as exc:
        return exc.cycle
    raise AssertionError("expected CycleError")


def test_simple_chain():
    assert topo_order({"c": ["b"], "b": ["a"]}) == ["a", "b", "c"]


def test_alphabetical_tie_breaking():
    deps = {"shoes": ["socks", "trousers"], "trousers": ["underwear"], "belt": ["trousers"],
            "socks": [], "watch": []}
    assert topo_order(deps) == ["socks", "underwear", "trousers", "belt", "shoes", "watch"]


def test_implicit_nodes_and_duplicates():
    assert topo_order({"b": ["z", "z", "a"]}) == ["a", "z", "b"]
    assert topo_order({}) == []
    assert topo_order({"x": set()}) == ["x"]


def test_order_respects_all_dependencies():
    deps = {f"n{i:02d}": [f"n{j:02d}" for j in range(i) if (i * j) % 7 == 3] for i in range(40)}
    order = topo_order(deps)
    pos = {n: i for i, n in enumerate(order)}
    assert sorted(order) == sorted(deps)
    for node, prereqs in deps.items():
        for p in prereqs:
            assert pos[p] < pos[node]


def test_cycle_detection():
    deps = {"a": ["b"], "b": ["c"], "c": ["a"], "d": []}
    cycle = _cycle_of(topo_order, deps)
    _assert_valid_cycle(deps, cycle)
    assert len(cycle) == 4


def test_self_loop_and_nested_cycle():
    assert _cycle_of(topo_order, {"a": ["a"]}) == ["a", "a"]
    deps = {"top": ["mid"], "mid": ["x"], "x": ["y"], "y": ["x", "leaf"], "leaf": []}
    cycle = _cycle_of(topo_order, deps)
    _assert_valid_cycle(deps, cycle)
    assert set(cycle) == {"x", "y"}
    assert isinstance(CycleError(["a", "a"]), ValueError)


def test_levels():
    deps = {"app": ["lib", "utils"], "lib": ["core"], "utils": ["core"], "tests": ["app"],
            "docs": []}
    assert levels(deps) == [["core", "docs"], ["lib", "utils"], ["app"], ["tests"]]
    assert levels({}) == []


def test_levels_longest_chain():
    deps = {"d": ["a", "c"], "c": ["b"], "b": ["a"]}
    assert levels(deps) == [["a"], ["b"], ["c"], ["d"]]


def test_levels_cycle():
    deps = {"a": ["b"], "b": ["a"], "c": ["a"]}
    _assert_valid_cycle(deps, _cycle_of(levels, deps))
