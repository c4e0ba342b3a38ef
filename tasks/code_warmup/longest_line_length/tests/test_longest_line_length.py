from longest_line_length import longest_line_length


def test_case_1():
    assert longest_line_length('ab\ncde\nf') == 3


def test_case_2():
    assert longest_line_length('') == 0


def test_case_3():
    assert longest_line_length('one line') == 8


def test_case_4():
    assert longest_line_length('a\n\nbb') == 2
