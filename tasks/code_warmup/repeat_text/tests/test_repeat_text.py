from repeat_text import repeat_text


def test_case_1():
    assert repeat_text('ab', 3) == 'ababab'


def test_case_2():
    assert repeat_text('x', 0) == ''


def test_case_3():
    assert repeat_text('', 5) == ''


def test_case_4():
    assert repeat_text('hi ', 2) == 'hi hi '
