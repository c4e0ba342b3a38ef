from brackets import first_error, is_balanced


def test_balanced():
    for text in ["", "abc", "()", "{[()]}", "f(a[1], {b: (c)})", "()[]{}"]:
        assert first_error(text) is None, text
        assert is_balanced(text) is True


def test_mismatched_closer():
    assert first_error("a(b]c") == 3
    assert first_error("([)]") == 2
    assert first_error("{(})") == 2


def test_unexpected_closer():
    assert first_error("x)") == 1
    assert first_error("()]") == 2
    assert first_error("}") == 0


def test_unclosed_openers_report_earliest():
    assert first_error("([]") == 0
    assert first_error("()(") == 2
    assert first_error("a{b(c[d") == 1
    assert first_error("(()") == 0


def test_closer_error_wins_over_unclosed():
    assert first_error("((]") == 2


def test_is_balanced_false():
    for text in ["(", ")", "(]", "[(])", "{{}"]:
        assert is_balanced(text) is False, text


def test_long_input():
    text = "(" * 5000 + "x" + ")" * 5000
    assert first_error(text) is None
    assert first_error(text + ")") == 10001
