from sum_of_squares import sum_of_squares


def test_case_1():
    assert sum_of_squares(3) == 14


def test_case_2():
    assert sum_of_squares(0) == 0


def test_case_3():
    assert sum_of_squares(1) == 1


def test_case_4():
    assert sum_of_squares(10) == 385
