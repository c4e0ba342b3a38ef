from is_prime import is_prime


def test_case_1():
    assert is_prime(7) is True


def test_case_2():
    assert is_prime(1) is False


def test_case_3():
    assert is_prime(9) is False


def test_case_4():
    assert is_prime(2) is True


def test_case_5():
    assert is_prime(97) is True
