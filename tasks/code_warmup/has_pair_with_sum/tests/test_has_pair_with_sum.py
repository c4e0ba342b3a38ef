from has_pair_with_sum import has_pair_with_sum


def test_case_1():
    assert has_pair_with_sum([1, 4, 6], 10) is True


def test_case_2():
    assert has_pair_with_sum([1, 2], 5) is False


def test_case_3():
    assert has_pair_with_sum([5], 10) is False


def test_case_4():
    assert has_pair_with_sum([5, 5], 10) is True
