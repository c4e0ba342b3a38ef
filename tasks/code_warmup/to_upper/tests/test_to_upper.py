from to_upper import to_upper


def test_case_1():
    assert to_upper('hello') == 'HELLO'


def test_case_2():
    assert to_upper('') == ''


def test_case_3():
    assert to_upper('MiXeD 1') == 'MIXED 1'


def test_case_4():
    assert to_upper('abc') == 'ABC'
