from count_positive import count_positive


def test_case_1():
    assert count_positive([1, -2, 3]) == 2


def test_case_2():
    assert count_positive([]) == 0


def test_case_3():
    assert count_positive([0, 0]) == 0


def test_case_4():
    assert count_positive([5, 6, 7]) == 3
