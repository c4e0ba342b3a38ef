from add import add


def test_case_1():
    assert add(2, 3) == 5


def test_case_2():
    assert add(-4, 4) == 0


def test_case_3():
    assert add(0, 0) == 0


def test_case_4():
    assert add(100, 250) == 350
