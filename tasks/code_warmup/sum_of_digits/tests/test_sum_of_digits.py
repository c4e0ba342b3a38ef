from sum_of_digits import sum_of_digits


def test_case_1():
    assert sum_of_digits(123) == 6


def test_case_2():
    assert sum_of_digits(0) == 0


def test_case_3():
    assert sum_of_digits(9999) == 36


def test_case_4():
    assert sum_of_digits(105) == 6
