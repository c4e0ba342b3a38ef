from count_uppercase import count_uppercase


def test_case_1():
    assert count_uppercase('Hello World') == 2


def test_case_2():
    assert count_uppercase('') == 0


def test_case_3():
    assert count_uppercase('ABC def') == 3


def test_case_4():
    assert count_uppercase('no caps') == 0
