from sort_descending import sort_descending


def test_case_1():
    assert sort_descending([3, 1, 2]) == [3, 2, 1]


def test_case_2():
    assert sort_descending([]) == []


def test_case_3():
    assert sort_descending([5, 5, 1]) == [5, 5, 1]


def test_case_4():
    assert sort_descending([-1, 0]) == [0, -1]
