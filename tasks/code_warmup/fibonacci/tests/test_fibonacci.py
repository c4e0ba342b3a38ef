from fibonacci import fibonacci


def test_case_1():
    assert fibonacci(10) == 55


def test_case_2():
    assert fibonacci(0) == 0


def test_case_3():
    assert fibonacci(1) == 1


def test_case_4():
    assert fibonacci(2) == 1


def test_case_5():
    assert fibonacci(20) == 6765
