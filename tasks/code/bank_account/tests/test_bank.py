from bank import Account, InsufficientFundsError


def _raises(exc_type, fn, *args):
    try:
        fn(*args)
    except exc_type:
        return True
    return False


def test_open_and_deposit():
    acct = Account("ada", 100)
    assert acct.owner == "ada"
    assert acct.balance == 100
    assert acct.deposit(50) == 150
    assert acct.balance == 150
    assert Account("bob").balance == 0


def test_invalid_opening_balance():
    assert _raises(ValueError, Account, "x", -1)
    assert _raises(ValueError, Account, "x", 1.5)
    assert _raises(ValueError, Account, "x", True)


def test_withdraw_and_insufficient():
    acct = Account("ada", 100)
    assert acct.withdraw(30) == 70
    assert _raises(InsufficientFundsError, acct.withdraw, 71)
    assert acct.balance == 70
    assert acct.withdraw(70) == 0


def test_invalid_amounts_change_nothing():
    acct = Account("ada", 100)
    for bad in (0, -5, 2.0, True, "10", None):
        assert _raises(ValueError, acct.deposit, bad), bad
        assert _raises(ValueError, acct.withdraw, bad), bad
    assert acct.balance == 100
    assert acct.history() == []


def test_balance_is_read_only():
    acct = Account("ada", 10)
    try:
        acct.balance = 1000
    except AttributeError:
        assert acct.balance == 10
        return
    raise AssertionError("balance should be read-only")


def test_transfer():
    a, b = Account("a", 100), Account("b", 5)
    assert a.transfer(b, 40) is None
    assert (a.balance, b.balance) == (60, 45)
    assert a.history() == [("transfer_out", 40, 60)]
    assert b.history() == [("transfer_in", 40, 45)]


def test_failed_transfers_change_nothing():
    a, b = Account("a", 100), Account("b", 5)
    assert _raises(InsufficientFundsError, a.transfer, b, 101)
    assert _raises(ValueError, a.transfer, b, 0)
    assert _raises(ValueError, a.transfer, a, 10)
    assert (a.balance, b.balance) == (100, 5)
    assert a.history() == [] and b.history() == []


def test_history_order_and_copy():
    acct = Account("ada", 10)
    acct.deposit(5)
    acct.withdraw(3)
    _raises(InsufficientFundsError, acct.withdraw, 1000)
    hist = acct.history()
    assert hist == [("deposit", 5, 15), ("withdraw", 3, 12)]
    hist.append(("deposit", 1, 1))
    hist.clear()
    assert acct.history() == [("deposit", 5, 15), ("withdraw", 3, 12)]
