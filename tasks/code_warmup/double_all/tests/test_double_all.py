from double_all import double_all


def test_case_1():
    assert double_all([1, 2, 3]) == [2, 4, 6]


def test_case_2():
    assert double_all([]) == []


def test_case_3():
    assert double_all([-1, 0]) == [-2, 0]


def test_case_4():
    assert double_all([50]) == [100]
