from factorial import factorial


def test_case_1():
    assert factorial(5) == 120


def test_case_2():
    assert factorial(0) == 1


def test_case_3():
    assert factorial(1) == 1


def test_case_4():
    assert factorial(10) == 3628800
