from strip_spaces import strip_spaces


def test_case_1():
    assert strip_spaces('  hi  ') == 'hi'


def test_case_2():
    assert strip_spaces('a b') == 'a b'


def test_case_3():
    assert strip_spaces('') == ''


def test_case_4():
    assert strip_spaces('   x') == 'x'
