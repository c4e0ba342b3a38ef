from is_palindrome import is_palindrome


def test_case_1():
    assert is_palindrome('level') is True


def test_case_2():
    assert is_palindrome('hello') is False


def test_case_3():
    assert is_palindrome('') is True


def test_case_4():
    assert is_palindrome('abba') is True
