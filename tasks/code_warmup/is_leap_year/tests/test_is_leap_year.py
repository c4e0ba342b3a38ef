from is_leap_year import is_leap_year


def test_case_1():
    assert is_leap_year(2024) is True


def test_case_2():
    assert is_leap_year(1900) is False


def test_case_3():
    assert is_leap_year(2000) is True


def test_case_4():
    assert is_leap_year(2023) is False
