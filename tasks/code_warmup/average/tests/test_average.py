from average import average


def test_case_1():
    assert average([1, 2, 3]) == 2.0


def test_case_2():
    assert average([]) == 0.0


def test_case_3():
    assert average([5]) == 5.0


def test_case_4():
    assert average([1, 2]) == 1.5
