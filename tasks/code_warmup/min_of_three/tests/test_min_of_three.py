from min_of_three import min_of_three


def test_case_1():
    assert min_of_three(3, 1, 2) == 1


def test_case_2():
    assert min_of_three(-1, -5, 0) == -5


def test_case_3():
    assert min_of_three(4, 4, 4) == 4


def test_case_4():
    assert min_of_three(9, 8, 10) == 8
