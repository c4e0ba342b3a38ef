from gcd import gcd


def test_case_1():
    assert gcd(12, 18) == 6


def test_case_2():
    assert gcd(7, 3) == 1


def test_case_3():
    assert gcd(10, 10) == 10


def test_case_4():
    assert gcd(100, 75) == 25
