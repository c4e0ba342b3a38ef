from last_word import last_word


def test_case_1():
    assert last_word('the quick fox') == 'fox'


def test_case_2():
    assert last_word('alone') == 'alone'


def test_case_3():
    assert last_word('a b  ') == 'b'
