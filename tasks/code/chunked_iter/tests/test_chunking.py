import itertools

from chunking import chunked, windowed


def test_chunked_basic():
    assert list(chunked(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(chunked("abcd", 2)) == [["a", "b"], ["c", "d"]]
    assert list(chunked([], 4)) == []


def test_chunked_is_lazy_on_infinite_input():
    first = list(itertools.islice(chunked(itertools.count(), 4), 2))
    assert first == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_chunked_consumes_only_what_is_needed():
    source = iter(range(100))
    gen = chunked(source, 5)
    assert next(gen) == [0, 1, 2, 3, 4]
    assert next(source) == 5


def test_windowed_basic():
    assert list(windowed(range(5), 3)) == [(0, 1, 2), (1, 2, 3), (2, 3, 4)]
    assert list(windowed(range(7), 3, 2)) == [(0, 1, 2), (2, 3, 4), (4, 5, 6)]
    assert list(windowed(range(8), 3, 2)) == [(0, 1, 2), (2, 3, 4), (4, 5, 6)]
    assert list(windowed("ab", 3)) == []


def test_windowed_step_larger_than_size():
    assert list(windowed(range(10), 2, 4)) == [(0, 1), (4, 5), (8, 9)]
    assert list(windowed(range(9), 2, 4)) == [(0, 1), (4, 5)]


def test_windowed_infinite_input():
    got = list(itertools.islice(windowed(itertools.count(), 2, 3), 3))
    assert got == [(0, 1), (3, 4), (6, 7)]


def test_errors_are_eager():
    for call in (lambda: chunked([1], 0), lambda: windowed([1], 0), lambda: windowed([1], 2, 0)):
        try:
            call()
        except ValueError:
            continue
        raise AssertionError("expected ValueError at call time")
