from caesar import decrypt, encrypt, find_shift


def test_encrypt_basic():
    assert encrypt("abc", 1) == "bcd"
    assert encrypt("xyz", 3) == "abc"


def test_encrypt_preserves_case_and_others():
    assert encrypt("Hello, World! 123 \u00e9", 5) == "Mjqqt, Btwqi! 123 \u00e9"


def test_negative_and_large_shifts():
    assert encrypt("abc", -1) == "zab"
    assert encrypt("Zebra", 26 * 4 + 2) == "Bgdtc"
    assert encrypt("Zebra", -28) == "Xczpy"


def test_decrypt_roundtrip():
    text = "The quick brown fox jumps over the lazy dog."
    for shift in (-53, -1, 0, 7, 25, 100):
        secret = encrypt(text, shift)
        assert type(secret) is str  # the text itself, not an object that remembers the plain text
        assert decrypt(secret, shift) == text


def test_find_shift_found():
    assert find_shift("attack at dawn", "dwwdfn dw gdzq") == 3
    assert find_shift("Same", "Same") == 0
    assert find_shift("", "") == 0


def test_find_shift_none():
    assert find_shift("abc", "abd") is None
    assert find_shift("abc", "ab") is None
    assert find_shift("a-b", "b+c") is None
    assert find_shift("Abc", "bcd") is None
