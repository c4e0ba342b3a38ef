from is_empty import is_empty


def test_case_1():
    assert is_empty('') is True


def test_case_2():
    assert is_empty('a') is False


def test_case_3():
    assert is_empty(' ') is False
