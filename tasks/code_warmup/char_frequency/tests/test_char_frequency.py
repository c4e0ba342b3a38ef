from char_frequency import char_frequency


def test_case_1():
    assert char_frequency('aab') == {'a': 2, 'b': 1}


def test_case_2():
    assert char_frequency('') == {}


def test_case_3():
    assert char_frequency('xyz') == {'x': 1, 'y': 1, 'z': 1}


def test_case_4():
    assert char_frequency('  ') == {' ': 2}
