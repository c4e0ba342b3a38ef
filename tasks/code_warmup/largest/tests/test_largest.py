from largest import largest


def test_case_1():
    assert largest([3, 9, 2]) == 9


def test_case_2():
    assert largest([-5, -2, -9]) == -2


def test_case_3():
    assert largest([7]) == 7


def test_case_4():
    assert largest([1, 1, 1]) == 1
