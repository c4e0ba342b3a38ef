from rle import decode, encode


def _raises_value_error(fn, arg):
    try:
        fn(arg)
    except ValueError:
        return True
    return False


def test_encode_basic():
    assert encode("aaabcc") == "3a1b2c"
    assert encode("abc") == "1a1b1c"


def test_encode_empty_and_single():
    assert encode("") == ""
    assert encode("z") == "1z"


def test_encode_long_runs_and_symbols():
    assert encode("x" * 12 + "  !") == "12x2 1!"
    assert encode("ééé-") == "3é1-"


def test_encode_rejects_digits():
    assert _raises_value_error(encode, "ab1")
    assert _raises_value_error(encode, "0")


def test_decode_basic():
    assert decode("3a1b2c") == "aaabcc"
    assert decode("") == ""


def test_decode_non_maximal_and_multidigit():
    assert decode("2a3a") == "aaaaa"
    assert decode("10-1 ") == "---------- "


def test_decode_malformed():
    for bad in ["a", "3ab", "3a4", "0a", "03a", "5"]:
        assert _raises_value_error(decode, bad), bad


def test_roundtrip():
    samples = ["hello   world!!", "mississippi", "x", "ab" * 5, "~~~~~~~~~~~~~~~~~~~~~~~~~~~"]
    for s in samples:
        encoded = encode(s)
        assert type(encoded) is str  # the text itself, not an object that remembers s
        assert decode(encoded) == s
