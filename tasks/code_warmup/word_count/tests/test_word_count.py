from word_count import word_count


def test_case_1():
    assert word_count('the cat sat') == 3


def test_case_2():
    assert word_count('') == 0


def test_case_3():
    assert word_count('  many   spaces here ') == 3


def test_case_4():
    assert word_count('one') == 1
