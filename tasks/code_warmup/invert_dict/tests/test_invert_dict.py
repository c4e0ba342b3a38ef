from invert_dict import invert_dict


def test_case_1():
    assert invert_dict({'a': 1, 'b': 2}) == {1: 'a', 2: 'b'}


def test_case_2():
    assert invert_dict({}) == {}


def test_case_3():
    assert invert_dict({'x': 9}) == {9: 'x'}
