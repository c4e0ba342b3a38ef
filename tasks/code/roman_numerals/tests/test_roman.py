from roman import from_roman, to_roman


def _raises_value_error(fn, arg):
    try:
        fn(arg)
    except ValueError:
        return True
    return False


def test_to_roman_small():
    expected = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]
    assert [to_roman(i) for i in range(1, 11)] == expected


def test_to_roman_larger():
    assert to_roman(1994) == "MCMXCIV"
    assert to_roman(3999) == "MMMCMXCIX"
    assert to_roman(444) == "CDXLIV"
    assert to_roman(2024) == "MMXXIV"


def test_to_roman_out_of_range():
    for n in (0, -5, 4000):
        assert _raises_value_error(to_roman, n)


def test_from_roman_values():
    assert from_roman("MCMXCIV") == 1994
    assert from_roman("XLII") == 42
    assert from_roman("I") == 1
    assert from_roman("MMMCMXCIX") == 3999


def test_from_roman_rejects_noncanonical():
    for bad in ["IIII", "VV", "IC", "XM", "IIV", "MMMM", "VX", "LL", "DM", "CMC"]:
        assert _raises_value_error(from_roman, bad), bad


def test_from_roman_rejects_garbage():
    for bad in ["", "xii", "XIIZ", " X", "X "]:
        assert _raises_value_error(from_roman, bad), bad


def test_roundtrip_all():
    for n in range(1, 4000):
        numeral = to_roman(n)
        assert type(numeral) is str  # the text itself, not an object that remembers n
        assert from_roman(numeral) == n
