from bases import from_base, to_base


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_to_base_examples():
    assert to_base(255, 16) == "ff"
    assert to_base(-255, 16) == "-ff"
    assert to_base(5, 2) == "101"
    assert to_base(0, 7) == "0"
    assert to_base(35, 36) == "z"
    assert to_base(36, 36) == "10"


def test_to_base_big_number():
    assert to_base(2**100, 32) == "1" + "0" * 20


def test_from_base_examples():
    assert from_base("ff", 16) == 255
    assert from_base("FF", 16) == 255
    assert from_base("-101", 2) == -5
    assert from_base("007", 8) == 7
    assert from_base("-0", 10) == 0
    assert from_base("Zz", 36) == 36 * 35 + 35


def test_roundtrip_many():
    for base in range(2, 37):
        for n in (-1000, -37, -1, 0, 1, 2, 35, 36, 99991, 10**20):
            written = to_base(n, base)
            assert type(written) is str  # the text itself, not an object that remembers n
            assert from_base(written, base) == n


def test_from_base_rejects_bad_syntax():
    bad = ["", "-", "+5", " 10", "10 ", "1_0", "0x1f", "--1", "1-"]
    for text in bad:
        assert _raises_value_error(from_base, text, 16), text


def test_from_base_rejects_digits_outside_base():
    assert _raises_value_error(from_base, "2", 2)
    assert _raises_value_error(from_base, "19a", 10)
    assert _raises_value_error(from_base, "\u0661", 10)


def test_invalid_base():
    for base in (0, 1, 37, -2):
        assert _raises_value_error(to_base, 10, base)
        assert _raises_value_error(from_base, "10", base)
