from palindromes import is_palindrome, next_palindrome


def _brute(n):
    n += 1
    while str(n) != str(n)[::-1]:
        n += 1
    return n


def test_is_palindrome_true():
    assert is_palindrome("Never odd or even")
    assert is_palindrome("No 'x' in Nixon!")
    assert is_palindrome("")
    assert is_palindrome("?!")
    assert is_palindrome("\u00c9t\u00e9")


def test_is_palindrome_false():
    assert not is_palindrome("palindrome")
    assert not is_palindrome("ab1")
    assert not is_palindrome("12 3")


def test_next_palindrome_small():
    assert next_palindrome(0) == 1
    assert next_palindrome(8) == 9
    assert next_palindrome(9) == 11
    assert next_palindrome(99) == 101
    assert next_palindrome(1221) == 1331


def test_next_palindrome_matches_brute_force():
    for n in list(range(0, 1200)) + [9989, 9999, 12921, 808, 10000, 99899]:
        assert next_palindrome(n) == _brute(n), n


def test_next_palindrome_large():
    assert next_palindrome(123456789012345678) == 123456789987654321
    assert next_palindrome(10**18 - 1) == 10**18 + 1
    assert next_palindrome(10**18) == 10**18 + 1
    assert next_palindrome(10**18 + 1) == 1000000001000000001
    assert next_palindrome(999999999) == 1000000001


def test_negative_raises():
    try:
        next_palindrome(-1)
    except ValueError:
        return
    raise AssertionError("expected ValueError")
