from digits import digits


def test_case_1():
    assert digits(123) == [1, 2, 3]


def test_case_2():
    assert digits(0) == [0]


def test_case_3():
    assert digits(907) == [9, 0, 7]
