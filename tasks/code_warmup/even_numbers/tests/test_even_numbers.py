from even_numbers import even_numbers


def test_case_1():
    assert even_numbers([1, 2, 3, 4]) == [2, 4]


def test_case_2():
    assert even_numbers([]) == []


def test_case_3():
    assert even_numbers([1, 3]) == []


def test_case_4():
    assert even_numbers([0, -2, 5]) == [0, -2]
