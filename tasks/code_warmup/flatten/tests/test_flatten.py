from flatten import flatten


def test_case_1():
    assert flatten([[1, 2], [3]]) == [1, 2, 3]


def test_case_2():
    assert flatten([]) == []


def test_case_3():
    assert flatten([[], [4], []]) == [4]
