import random
from collections import Counter

from huffman import build_codes, canonical_codes, decode, encode


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def _huffman_cost(text):
    """Total encoded length of an optimal prefix code (independent check)."""
    weights = sorted(Counter(text).values())
    if len(weights) <= 1:
        return len(text)
    total = 0
    while len(weights) > 1:
        a, b = weights.pop(0), weights.pop(0)
        total += a + b
        weights.append(a + b)
        weights.sort()
    return total


def test_build_codes_examples():
    assert build_codes("aaaabbc") == {"a": "1", "b": "01", "c": "00"}
    assert build_codes("abcd") == {"a": "00", "b": "01", "c": "10", "d": "11"}
    assert build_codes("aabbc") == {"b": "0", "c": "10", "a": "11"}


def test_build_codes_special_cases():
    assert build_codes("") == {}
    assert build_codes("zzzz") == {"z": "0"}
    assert build_codes("ab") == {"a": "0", "b": "1"}


def test_build_codes_tie_breaking_by_key():
    codes = build_codes("dcba" + "e" * 4)
    # (1,a)+(1,b) -> (2,a); (1,c)+(1,d) -> (2,c); (2,a)+(2,c) -> (4,a); then (4,a)+(4,e).
    assert codes == {"a": "000", "b": "001", "c": "010", "d": "011", "e": "1"}


def test_optimal_length_and_roundtrip():
    rng = random.Random(12)
    for _ in range(60):
        text = "".join(rng.choice("abcdefg \u00e9\n") for _ in range(rng.randint(1, 200)))
        codes = build_codes(text)
        bits = encode(text, codes)
        assert len(bits) == _huffman_cost(text)
        assert decode(bits, codes) == text


def test_encode_errors_and_empty():
    codes = build_codes("abc")
    assert encode("", codes) == ""
    assert decode("", codes) == ""
    assert _raises_value_error(encode, "abd", codes)


def test_decode_with_foreign_table():
    table = {"x": "0", "y": "10", "z": "11"}
    assert decode("0101100", table) == "xyzxx"
    assert _raises_value_error(decode, "1", table)
    assert _raises_value_error(decode, "012", table)
    sparse = {"p": "00", "q": "01"}
    assert _raises_value_error(decode, "0010", sparse)


def test_decode_rejects_bad_tables():
    for table in [{}, {"a": ""}, {"a": "0", "b": "0"}, {"a": "0", "b": "01"}, {"a": "2"},
                  {"a": "10", "b": "1"}]:
        assert _raises_value_error(decode, "", table), table


def test_canonical_codes():
    assert canonical_codes({"b": "0", "a": "11", "c": "10"}) == {"b": "0", "a": "10", "c": "11"}
    assert canonical_codes(build_codes("aaaabbc")) == {"a": "0", "b": "10", "c": "11"}
    lengths = {"a": "000", "b": "001", "c": "010", "d": "011", "e": "1"}
    assert canonical_codes(lengths) == {"e": "0", "a": "100", "b": "101", "c": "110", "d": "111"}
    assert canonical_codes({}) == {}
    assert canonical_codes({"q": "1"}) == {"q": "0"}
    assert _raises_value_error(canonical_codes, {"a": ""})


def test_canonical_codes_are_prefix_free_and_same_lengths():
    rng = random.Random(5)
    text = "".join(rng.choice("abcdefghijklmnop") * rng.randint(1, 30) for _ in range(80))
    codes = build_codes(text)
    canon = canonical_codes(codes)
    assert {k: len(v) for k, v in canon.items()} == {k: len(v) for k, v in codes.items()}
    bits = encode(text, canon)
    assert type(bits) is str  # the bits themselves, not an object that remembers the text
    assert decode(bits, canon) == text


def test_large_text():
    rng = random.Random(9)
    text = "".join(rng.choice("etaoinshrdlu") for _ in range(100_000))
    codes = build_codes(text)
    bits = encode(text, codes)
    assert type(bits) is str  # the bits themselves, not an object that remembers the text
    assert decode(bits, codes) == text
