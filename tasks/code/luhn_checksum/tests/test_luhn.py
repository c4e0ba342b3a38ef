from luhn import check_digit, is_valid


def test_valid_numbers():
    assert is_valid("12345674")
    assert is_valid("4012 8886")
    assert is_valid("3782 8224 6310 005")
    assert is_valid("00")
    assert is_valid("91")


def test_invalid_checksums():
    assert not is_valid("12345675")
    assert not is_valid("4012 8887")
    assert not is_valid("19")


def test_invalid_format_returns_false():
    for text in ["", "0", " 0 ", "1234-5674", "12a4", "\u0661\u0662", "12\t34"]:
        assert is_valid(text) is False, text


def test_check_digit():
    assert check_digit("1234567") == "4"
    assert check_digit("4012 888") == "6"
    assert check_digit("37828224631000") == "5"
    assert check_digit("0000") == "0"
    assert check_digit("9") == "1"


def test_check_digit_consistent_with_is_valid():
    for n in range(1, 3000, 7):
        partial = str(n)
        digit = check_digit(partial)
        assert len(digit) == 1
        assert is_valid(partial + digit)
        wrong = str((int(digit) + 1) % 10)
        assert not is_valid(partial + wrong)


def test_check_digit_errors():
    for bad in ["", "   ", "12x", "1-2"]:
        try:
            check_digit(bad)
        except ValueError:
            continue
        raise AssertionError(f"expected ValueError for {bad!r}")
