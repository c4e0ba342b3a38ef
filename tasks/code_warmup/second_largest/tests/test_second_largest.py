from second_largest import second_largest


def test_case_1():
    assert second_largest([1, 5, 3]) == 3


def test_case_2():
    assert second_largest([4, 4, 2]) == 2


def test_case_3():
    assert second_largest([-1, -7]) == -7


def test_case_4():
    assert second_largest([10, 9, 10, 8]) == 9
