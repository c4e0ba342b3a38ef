from is_adult import is_adult


def test_case_1():
    assert is_adult(18) is True


def test_case_2():
    assert is_adult(17) is False


def test_case_3():
    assert is_adult(65) is True


def test_case_4():
    assert is_adult(0) is False
