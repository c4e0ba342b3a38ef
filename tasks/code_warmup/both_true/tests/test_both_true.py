from both_true import both_true


def test_case_1():
    assert both_true(True, True) is True


def test_case_2():
    assert both_true(True, False) is False


def test_case_3():
    assert both_true(False, False) is False
