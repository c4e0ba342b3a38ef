from flatten import flatten


def test_full_flatten():
    assert flatten([1, [2, (3, [4])], "ab"]) == [1, 2, 3, 4, "ab"]


def test_atoms_are_not_expanded():
    data = ["xyz", b"by", {"k": 1}, {5}, None, 2.5]
    assert flatten(data) == data


def test_depth_limits():
    nested = [1, [2, [3, [4]]]]
    assert flatten(nested, depth=0) == [1, [2, [3, [4]]]]
    assert flatten(nested, depth=1) == [1, 2, [3, [4]]]
    assert flatten(nested, depth=2) == [1, 2, 3, [4]]
    assert flatten(nested, depth=10) == [1, 2, 3, 4]


def test_empty_sequences_vanish():
    assert flatten([[], (), [[], [()]], 7]) == [7]
    assert flatten([]) == []
    assert flatten(()) == []


def test_input_not_modified_and_copy():
    inner = [2, 3]
    data = [1, inner]
    result = flatten(data, depth=0)
    assert result == [1, [2, 3]]
    assert result is not data
    assert flatten(data) == [1, 2, 3]
    assert data == [1, [2, 3]] and inner == [2, 3]


def test_tuple_input_and_subclass():
    class MyList(list):
        pass

    assert flatten((1, MyList([2, MyList([3])]))) == [1, 2, 3]


def test_very_deep_nesting():
    nested: list = [0]
    for i in range(1, 3000):
        nested = [nested, i]
    assert flatten(nested) == list(range(3000))


def test_negative_depth():
    try:
        flatten([1], depth=-1)
    except ValueError:
        return
    raise AssertionError("expected ValueError")
