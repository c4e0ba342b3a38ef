from remove_duplicates import remove_duplicates


def test_case_1():
    assert remove_duplicates([1, 2, 1, 3, 2]) == [1, 2, 3]


def test_case_2():
    assert remove_duplicates([]) == []


def test_case_3():
    assert remove_duplicates([4, 4, 4]) == [4]


def test_case_4():
    assert remove_duplicates([3, 1, 2]) == [3, 1, 2]
