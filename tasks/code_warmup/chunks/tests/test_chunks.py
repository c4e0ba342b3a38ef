from chunks import chunks


def test_case_1():
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_case_2():
    assert chunks([], 3) == []


def test_case_3():
    assert chunks([1, 2], 5) == [[1, 2]]
