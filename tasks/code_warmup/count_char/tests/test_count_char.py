from count_char import count_char


def test_case_1():
    assert count_char('banana', 'a') == 3


def test_case_2():
    assert count_char('banana', 'z') == 0


def test_case_3():
    assert count_char('', 'a') == 0


def test_case_4():
    assert count_char('Aa', 'a') == 1
