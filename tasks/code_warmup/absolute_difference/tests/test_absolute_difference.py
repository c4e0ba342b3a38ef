from absolute_difference import absolute_difference


def test_case_1():
    assert absolute_difference(3, 10) == 7


def test_case_2():
    assert absolute_difference(10, 3) == 7


def test_case_3():
    assert absolute_difference(-2, 2) == 4


def test_case_4():
    assert absolute_difference(5, 5) == 0
