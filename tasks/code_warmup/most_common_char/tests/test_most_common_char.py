from most_common_char import most_common_char


def test_case_1():
    assert most_common_char('banana') == 'a'


def test_case_2():
    assert most_common_char('abc') == 'a'


def test_case_3():
    assert most_common_char('zzy') == 'z'


def test_case_4():
    assert most_common_char('abbcc') == 'b'
