from acronym import acronym


def test_case_1():
    assert acronym('portable network graphics') == 'PNG'


def test_case_2():
    assert acronym('as soon as possible') == 'ASAP'


def test_case_3():
    assert acronym('') == ''


def test_case_4():
    assert acronym('Hello') == 'H'
