import random

from editdist import closest, levenshtein, osa_distance


def _lev_reference(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        for j in range(len(b) + 1):
            if i == 0 or j == 0:
                table[i][j] = i + j
            else:
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1,
                                  table[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    return table[-1][-1]


def test_levenshtein_examples():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert levenshtein("abc", "") == 3
    assert levenshtein("same", "same") == 0
    assert levenshtein("Case", "case") == 1


def test_levenshtein_random_against_reference():
    rng = random.Random(1234)
    for _ in range(200):
        a = "".join(rng.choice("abc") for _ in range(rng.randint(0, 8)))
        b = "".join(rng.choice("abc") for _ in range(rng.randint(0, 8)))
        assert levenshtein(a, b) == _lev_reference(a, b), (a, b)
        assert levenshtein(a, b) == levenshtein(b, a)


def test_osa_transpositions():
    assert osa_distance("ab", "ba") == 1
    assert levenshtein("ab", "ba") == 2
    assert osa_distance("abcdef", "abdcef") == 1
    assert osa_distance("ca", "abc") == 3
    assert osa_distance("", "") == 0
    assert osa_distance("kitten", "sitting") == 3


def test_osa_never_exceeds_levenshtein():
    rng = random.Random(99)
    for _ in range(200):
        a = "".join(rng.choice("xyz") for _ in range(rng.randint(0, 7)))
        b = "".join(rng.choice("xyz") for _ in range(rng.randint(0, 7)))
        assert osa_distance(a, b) <= levenshtein(a, b)
        assert osa_distance(a, b) == osa_distance(b, a)


def test_long_strings():
    rng = random.Random(7)
    a = "".join(rng.choice("acgt") for _ in range(600))
    b = a[:200] + "t" + a[201:450] + a[460:]
    assert levenshtein(a, b) <= 11
    assert levenshtein(a, a) == 0
    assert levenshtein("a" * 600, "b" * 600) == 600


def test_closest():
    words = ["apple", "apply", "ample", "maple", "apple"]
    assert closest("appel", words) == ["apple", "apply", "apple"]
    assert closest("mapel", words) == ["maple"]
    assert closest("aple", ["ale", "apple", "ample", "xyz"]) == ["ale", "apple", "ample"]
    assert closest("word", []) == []


def test_closest_max_distance():
    assert closest("hello", ["world", "help"], max_distance=1) == []
    assert closest("hello", ["world", "help", "hallo"], max_distance=2) == ["hallo"]
    assert closest("hello", ["hello"], max_distance=0) == ["hello"]
    try:
        closest("x", ["y"], max_distance=-1)
    except ValueError:
        return
    raise AssertionError("expected ValueError")
