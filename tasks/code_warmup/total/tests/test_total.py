from total import total


def test_case_1():
    assert total([1, 2, 3]) == 6


def test_case_2():
    assert total([]) == 0


def test_case_3():
    assert total([-5, 5, 10]) == 10


def test_case_4():
    assert total([7]) == 7
