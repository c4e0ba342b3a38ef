from remove_vowels import remove_vowels


def test_case_1():
    assert remove_vowels('hello') == 'hll'


def test_case_2():
    assert remove_vowels('AEIOU') == ''


def test_case_3():
    assert remove_vowels('sky') == 'sky'


def test_case_4():
    assert remove_vowels('Banana Split') == 'Bnn Splt'
