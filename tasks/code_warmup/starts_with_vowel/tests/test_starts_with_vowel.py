from starts_with_vowel import starts_with_vowel


def test_case_1():
    assert starts_with_vowel('apple') is True


def test_case_2():
    assert starts_with_vowel('Egg') is True


def test_case_3():
    assert starts_with_vowel('tree') is False


def test_case_4():
    assert starts_with_vowel('') is False
