from key_of_max import key_of_max


def test_case_1():
    assert key_of_max({'a': 1, 'b': 5, 'c': 2}) == 'b'


def test_case_2():
    assert key_of_max({'x': -1}) == 'x'


def test_case_3():
    assert key_of_max({'p': 3, 'q': 9}) == 'q'
