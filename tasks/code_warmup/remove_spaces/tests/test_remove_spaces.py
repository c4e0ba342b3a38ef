from remove_spaces import remove_spaces


def test_case_1():
    assert remove_spaces('a b c') == 'abc'


def test_case_2():
    assert remove_spaces('') == ''


def test_case_3():
    assert remove_spaces('  ') == ''


def test_case_4():
    assert remove_spaces('no-spaces') == 'no-spaces'
