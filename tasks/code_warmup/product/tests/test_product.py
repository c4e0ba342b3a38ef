from product import product


def test_case_1():
    assert product([2, 3, 4]) == 24


def test_case_2():
    assert product([]) == 1


def test_case_3():
    assert product([5, 0, 2]) == 0


def test_case_4():
    assert product([-1, 3]) == -3
