from index_of import index_of


def test_case_1():
    assert index_of([5, 6, 7], 6) == 1


def test_case_2():
    assert index_of([], 3) == -1


def test_case_3():
    assert index_of([1, 2, 1], 1) == 0


def test_case_4():
    assert index_of([4], 9) == -1
