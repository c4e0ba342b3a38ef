from greet import greet


def test_case_1():
    assert greet('Ada') == 'Hello, Ada!'


def test_case_2():
    assert greet('') == 'Hello, !'


def test_case_3():
    assert greet('Bob Lee') == 'Hello, Bob Lee!'
