import random
import re

from regexlite import match, search


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_literals_dot_and_quantifiers():
    assert match("abc", "abc") and not match("abc", "abcd") and not match("abc", "ab")
    assert match("a.c", "a\nc")
    assert match("ab*c", "ac") and match("ab*c", "abbbc")
    assert match("ab+c", "abc") and not match("ab+c", "ac")
    assert match("colou?r", "color") and match("colou?r", "colour")
    assert match("", "") and not match("", "x")


def test_special_literals_and_escapes():
    assert match("a{2}", "a{2}")
    assert match("^x$", "^x$")
    assert match("a]b", "a]b")
    assert match("\\d+\\.\\d\\d", "3.14") and not match("\\d+\\.\\d\\d", "3x14")
    assert match("\\w+\\s\\w+", "hello_1\tworld")
    assert match("\\*\\+\\?\\(\\)\\[\\\\", "*+?()[\\")
    assert not match("\\d", "\u0661")


def test_classes():
    assert match("[abc]+", "cabba") and not match("[abc]+", "abd")
    assert match("[a-z0-9_]+", "var_2") and not match("[a-z]", "A")
    assert match("[^0-9]+", "abc") and not match("[^0-9]", "5")
    assert match("[]a]", "]") and match("[^]a]", "b") and not match("[^]a]", "]")
    assert match("[-a]", "-") and match("[a-]", "-") and not match("[a-]", "b")
    assert match("[\\]\\\\]+", "]\\]") and match("[.]", ".") and not match("[.]", "x")


def test_groups_and_alternation():
    assert match("(ab)+", "ababab") and not match("(ab)+", "aba")
    assert match("cat|dog", "dog") and not match("cat|dog", "catdog")
    assert match("(cat|dog)s?", "cats")
    assert match("a|", "") and match("a|", "a")
    assert match("()", "") and match("(|b)c", "c") and match("(|b)c", "bc")
    assert match("((a|b)(c|d))*", "acbdad")


def test_syntax_errors():
    bad = ["*a", "a**", "a+?", "(*a)", "a|*", "(ab", "ab)", "[abc", "[]", "[^]", "[z-a]", "abc\\", "[a\\"]
    for pattern in bad:
        assert _raises_value_error(match, pattern, ""), pattern
        assert _raises_value_error(search, pattern, ""), pattern


def test_search_leftmost_longest():
    assert search("a*", "bbb") == (0, 0)
    assert search("b+", "aabbbcbb") == (2, 5)
    assert search("a|ab|abc", "xxabcd") == (2, 5)
    assert search("(a|ab)(c|bcd)", "abcd") == (0, 4)
    assert search("z", "abc") is None
    assert search("x?", "") == (0, 0)
    assert search("c$", "abc$d") == (2, 4)


def test_no_exponential_blowup():
    text = "a" * 300
    assert not match("(a*)*b", text)
    assert not match("(a|aa)*c", text)
    assert match("(a|aa)*", text)
    assert match("(a?)*(a*)*a", text)
    assert search("(a*)*b", text + "b") == (0, 301)


def test_agrees_with_re_on_random_patterns():
    rng = random.Random(8)
    atoms = ["a", "b", ".", "[ab]", "[^a]", "(a|b)", "(ab|a)", "()"]
    for _ in range(300):
        parts = []
        for _ in range(rng.randint(1, 4)):
            atom = rng.choice(atoms)
            parts.append(atom + rng.choice(["", "", "*", "+", "?"]))
        pattern = "".join(parts)
        if rng.random() < 0.3:
            pattern += "|" + rng.choice(atoms)
        text = "".join(rng.choice("abc") for _ in range(rng.randint(0, 6)))
        expected = re.fullmatch(pattern, text, re.DOTALL) is not None
        assert match(pattern, text) == expected, (pattern, text)
