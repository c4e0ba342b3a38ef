from intervals import gaps, insert, merge, total_length


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_merge_basic():
    assert merge([(1, 3), (2, 6), (8, 10), (15, 18)]) == [(1, 6), (8, 10), (15, 18)]
    assert merge([]) == []


def test_merge_unsorted_touching_and_contained():
    assert merge([(5, 7), (1, 3), (3, 4), (2, 2)]) == [(1, 4), (5, 7)]
    assert merge([(1, 10), (2, 3), (4, 5)]) == [(1, 10)]
    assert merge([(1, 2), (3, 4)]) == [(1, 2), (3, 4)]


def test_merge_points_and_negatives():
    assert merge([(0, 0), (0, 0), (-5, -1), (-1, 0)]) == [(-5, 0)]


def test_merge_does_not_modify_input():
    data = [(3, 4), (1, 2)]
    merge(data)
    insert(data, (2, 3))
    assert data == [(3, 4), (1, 2)]


def test_insert():
    assert insert([(1, 2), (3, 5), (6, 7), (8, 10)], (4, 8)) == [(1, 2), (3, 10)]
    assert insert([], (4, 8)) == [(4, 8)]
    assert insert([(1, 5)], (6, 8)) == [(1, 5), (6, 8)]


def test_total_length():
    assert total_length([(1, 3), (2, 6), (10, 11), (20, 20)]) == 6
    assert total_length([]) == 0


def test_gaps():
    assert gaps([(2, 4), (6, 7)], 0, 10) == [(0, 2), (4, 6), (7, 10)]
    assert gaps([(0, 10)], 0, 10) == []
    assert gaps([(-5, 1), (9, 20)], 0, 10) == [(1, 9)]
    assert gaps([], 3, 5) == [(3, 5)]
    assert gaps([(4, 4)], 3, 5) == [(3, 4), (4, 5)]
    assert gaps([(100, 200)], 0, 5) == [(0, 5)]
    assert gaps([], 5, 5) == []


def test_errors():
    assert _raises_value_error(merge, [(3, 1)])
    assert _raises_value_error(insert, [(1, 2)], (5, 4))
    assert _raises_value_error(total_length, [(0, 1), (2, 1)])
    assert _raises_value_error(gaps, [(1, 2)], 5, 4)
    assert _raises_value_error(gaps, [(2, 1)], 0, 4)
