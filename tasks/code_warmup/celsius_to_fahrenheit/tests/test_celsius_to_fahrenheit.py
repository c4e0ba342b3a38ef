from celsius_to_fahrenheit import celsius_to_fahrenheit


def test_case_1():
    assert celsius_to_fahrenheit(100) == 212


def test_case_2():
    assert celsius_to_fahrenheit(0) == 32


def test_case_3():
    assert celsius_to_fahrenheit(-40) == -40


def test_case_4():
    assert celsius_to_fahrenheit(37) == 98.6
