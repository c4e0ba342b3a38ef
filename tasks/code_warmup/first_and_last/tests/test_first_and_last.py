from first_and_last import first_and_last


def test_case_1():
    assert first_and_last([1, 2, 3]) == [1, 3]


def test_case_2():
    assert first_and_last([7]) == [7, 7]


def test_case_3():
    assert first_and_last([4, 5]) == [4, 5]
