from merge_dicts import merge_dicts


def test_case_1():
    assert merge_dicts({'a': 1}, {'b': 2}) == {'a': 1, 'b': 2}


def test_case_2():
    assert merge_dicts({'a': 1}, {'a': 3}) == {'a': 3}


def test_case_3():
    assert merge_dicts({}, {}) == {}
