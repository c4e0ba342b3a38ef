from reverse_string import reverse_string


def test_case_1():
    assert reverse_string('abc') == 'cba'


def test_case_2():
    assert reverse_string('') == ''


def test_case_3():
    assert reverse_string('racecar') == 'racecar'


def test_case_4():
    assert reverse_string('Hello, World') == 'dlroW ,olleH'
