from contains import contains


def test_case_1():
    assert contains([1, 2, 3], 2) is True


def test_case_2():
    assert contains([], 1) is False


def test_case_3():
    assert contains([4, 5], 6) is False


def test_case_4():
    assert contains([0], 0) is True
