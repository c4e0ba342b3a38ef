from longest_word import longest_word


def test_case_1():
    assert longest_word('a quick fox') == 'quick'


def test_case_2():
    assert longest_word('one two six') == 'one'


def test_case_3():
    assert longest_word('elephant') == 'elephant'
