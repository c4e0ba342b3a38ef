from wrap import justify, wrap


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_wrap_basic():
    text = "the quick brown fox jumps over the lazy dog"
    assert wrap(text, 10) == ["the quick", "brown fox", "jumps over", "the lazy", "dog"]
    assert wrap(text, 100) == [text]


def test_wrap_whitespace_handling():
    assert wrap("  one\ttwo \n\n three  ", 7) == ["one two", "three"]
    assert wrap("", 5) == []
    assert wrap(" \n ", 5) == []


def test_wrap_exact_fit():
    assert wrap("abc def", 7) == ["abc def"]
    assert wrap("abc def", 6) == ["abc", "def"]


def test_wrap_long_words():
    assert wrap("aa bbbbbbb c", 3) == ["aa", "bbb", "bbb", "b c"]
    assert wrap("abcdefgh", 4) == ["abcd", "efgh"]
    assert wrap("x abcdefgh yz", 4) == ["x", "abcd", "efgh", "yz"]
    assert wrap("abcde", 1) == ["a", "b", "c", "d", "e"]


def test_justify_basic():
    text = "This is an example of text justification."
    assert justify(text, 16) == [
        "This    is    an",
        "example  of text",
        "justification.  ",
    ]


def test_justify_uneven_gaps_left_heavy():
    assert justify("a b c d", 6) == ["a  b c", "d     "]
    assert justify("aa b c ddd", 8) == ["aa  b  c", "ddd     "]


def test_justify_single_word_lines_and_last_line():
    assert justify("lonely wordsmith ok", 10) == ["lonely    ", "wordsmith ", "ok        "]
    assert justify("one", 5) == ["one  "]
    assert justify("", 5) == []


def test_every_justified_line_has_exact_width():
    text = " ".join(f"w{i * 7 % 13}" * (i % 4 + 1) for i in range(60))
    for width in (12, 17, 30):
        lines = justify(text, width)
        assert all(len(line) == width for line in lines)
        assert " ".join(" ".join(lines).split()) == " ".join(" ".join(wrap(text, width)).split())


def test_invalid_width():
    assert _raises_value_error(wrap, "abc", 0)
    assert _raises_value_error(justify, "abc", -2)
