from is_power_of_two import is_power_of_two


def test_case_1():
    assert is_power_of_two(8) is True


def test_case_2():
    assert is_power_of_two(6) is False


def test_case_3():
    assert is_power_of_two(1) is True


def test_case_4():
    assert is_power_of_two(0) is False
