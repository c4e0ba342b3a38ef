from wordfreq import top_words


def test_basic_counts():
    text = "the cat and the hat and the bat"
    assert top_words(text, 2) == [("the", 3), ("and", 2)]


def test_ties_alphabetical():
    assert top_words("b a c b a c d", 3) == [("a", 2), ("b", 2), ("c", 2)]


def test_case_insensitive_and_separators():
    text = "Don't stop-STOP! stop... DON'T"
    assert top_words(text, 10) == [("stop", 3), ("don", 2), ("t", 2)]


def test_digits_and_unicode_are_separators():
    assert top_words("abc123abc caf\u00e9 cafe", 5) == [("abc", 2), ("caf", 1), ("cafe", 1)]


def test_fewer_words_than_k():
    assert top_words("one two", 5) == [("one", 1), ("two", 1)]
    assert top_words("  ... 42 ", 3) == []


def test_k_zero():
    assert top_words("a a a", 0) == []


def test_negative_k():
    try:
        top_words("a b", -1)
    except ValueError:
        return
    raise AssertionError("expected ValueError")
