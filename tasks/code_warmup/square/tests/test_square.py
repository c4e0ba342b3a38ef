from square import square


def test_case_1():
    assert square(3) == 9


def test_case_2():
    assert square(-4) == 16


def test_case_3():
    assert square(0) == 0


def test_case_4():
    assert square(12) == 144
