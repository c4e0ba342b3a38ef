import random

from listdiff import diff, invert, patch


def _lcs_len(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_identical_and_empty():
    assert diff([1, 2], [1, 2]) == [(" ", 1), (" ", 2)]
    assert diff([], []) == []
    assert diff([], ["x"]) == [("+", "x")]
    assert diff(["x", "y"], []) == [("-", "x"), ("-", "y")]


def test_canonical_choice():
    assert diff("ab", "ba") == [("-", "a"), (" ", "b"), ("+", "a")]
    assert diff("abc", "axc") == [(" ", "a"), ("-", "b"), ("+", "x"), (" ", "c")]
    assert diff("ab", "cd") == [("-", "a"), ("-", "b"), ("+", "c"), ("+", "d")]


def test_canonical_longer_example():
    got = diff("abcabba", "cbabac")
    assert got == [("-", "a"), ("-", "b"), (" ", "c"), ("-", "a"), (" ", "b"), ("+", "a"),
                   (" ", "b"), (" ", "a"), ("+", "c")]


def test_lines_diff():
    old = ["import os", "x = 1", "print(x)"]
    new = ["import os", "import sys", "x = 2", "print(x)"]
    assert diff(old, new) == [(" ", "import os"), ("-", "x = 1"), ("+", "import sys"),
                              ("+", "x = 2"), (" ", "print(x)")]


def test_minimal_and_patch_random():
    rng = random.Random(42)
    for _ in range(150):
        a = [rng.randint(0, 4) for _ in range(rng.randint(0, 12))]
        b = [rng.randint(0, 4) for _ in range(rng.randint(0, 12))]
        script = diff(a, b)
        edits = sum(op != " " for op, _ in script)
        assert edits == len(a) + len(b) - 2 * _lcs_len(a, b)
        assert patch(a, script) == b
        assert patch(b, invert(script)) == a


def test_larger_inputs():
    rng = random.Random(5)
    a = [rng.randint(0, 20) for _ in range(400)]
    b = a[:100] + [99] + a[150:] + [98, 97]
    script = diff(a, b)
    assert patch(a, script) == b
    assert sum(op != " " for op, _ in script) == 53


def test_patch_errors():
    a = [1, 2, 3]
    assert _raises_value_error(patch, a, [(" ", 1), (" ", 2)])
    assert _raises_value_error(patch, a, [(" ", 1), ("-", 9), (" ", 3)])
    assert _raises_value_error(patch, a, [(" ", 1), (" ", 2), (" ", 3), (" ", 4)])
    assert _raises_value_error(patch, a, [("?", 1), (" ", 2), (" ", 3)])
    assert patch([], [("+", 1)]) == [1]


def test_invert():
    script = [(" ", 1), ("-", 2), ("+", 3)]
    assert invert(script) == [(" ", 1), ("+", 2), ("-", 3)]
    assert script == [(" ", 1), ("-", 2), ("+", 3)]
    assert _raises_value_error(invert, [("*", 1)])
