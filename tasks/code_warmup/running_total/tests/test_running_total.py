from running_total import running_total


def test_case_1():
    assert running_total([1, 2, 3]) == [1, 3, 6]


def test_case_2():
    assert running_total([]) == []


def test_case_3():
    assert running_total([5, -5]) == [5, 0]
