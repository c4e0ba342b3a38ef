from join_with_dash import join_with_dash


def test_case_1():
    assert join_with_dash(['a', 'b', 'c']) == 'a-b-c'


def test_case_2():
    assert join_with_dash([]) == ''


def test_case_3():
    assert join_with_dash(['one']) == 'one'


def test_case_4():
    assert join_with_dash(['x', '', 'y']) == 'x--y'
