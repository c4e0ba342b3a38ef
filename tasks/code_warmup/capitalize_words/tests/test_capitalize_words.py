from capitalize_words import capitalize_words


def test_case_1():
    assert capitalize_words('hello world') == 'Hello World'


def test_case_2():
    assert capitalize_words('') == ''


def test_case_3():
    assert capitalize_words('pYTHON') == 'Python'


def test_case_4():
    assert capitalize_words('a b c') == 'A B C'
