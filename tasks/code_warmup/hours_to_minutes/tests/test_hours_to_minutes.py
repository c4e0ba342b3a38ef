from hours_to_minutes import hours_to_minutes


def test_case_1():
    assert hours_to_minutes(2) == 120


def test_case_2():
    assert hours_to_minutes(0) == 0


def test_case_3():
    assert hours_to_minutes(24) == 1440
