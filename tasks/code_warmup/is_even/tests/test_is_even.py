from is_even import is_even


def test_case_1():
    assert is_even(4) is True


def test_case_2():
    assert is_even(7) is False


def test_case_3():
    assert is_even(0) is True


def test_case_4():
    assert is_even(-3) is False
