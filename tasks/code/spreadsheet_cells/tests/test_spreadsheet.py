from fractions import Fraction

from spreadsheet import Sheet


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_literals_and_empty():
    s = Sheet()
    s.set("A1", "42")
    s.set("A2", "-3.25")
    s.set("A3", "hello")
    s.set("A4", " 12")
    assert s.get("A1") == 42 and isinstance(s.get("A1"), Fraction)
    assert s.get("A2") == Fraction(-13, 4)
    assert s.get("A3") == "hello" and s.get("A4") == " 12"
    assert s.get("Z999") is None
    s.set("A1", "")
    assert s.get("A1") is None


def test_arithmetic_and_precedence():
    s = Sheet()
    s.set("A1", "= 1 + 2 * 3")
    s.set("A2", "=(1 + 2) * 3")
    s.set("A3", "=1/3 + 1/6")
    s.set("A4", "=-2 - -3")
    s.set("A5", "=10 - 4 - 3")
    assert [s.get(f"A{i}") for i in range(1, 6)] == [7, 9, Fraction(1, 2), 1, 3]


def test_references_update_live():
    s = Sheet()
    s.set("A1", "2")
    s.set("B1", "=A1 * 10")
    s.set("C1", "=B1 + A1 + D1")
    assert s.get("C1") == 22
    s.set("A1", "3")
    assert s.get("B1") == 30 and s.get("C1") == 33
    s.set("D1", "=0.5")
    assert s.get("C1") == Fraction(67, 2)


def test_functions_and_ranges():
    s = Sheet()
    for i, v in enumerate(["4", "", "-1", "2.5"], start=1):
        s.set(f"A{i}", v)
    s.set("B1", "10")
    s.set("B4", "=A1*2")
    s.set("C1", "=SUM(A1:B4)")
    s.set("C2", "=MIN(B4:A1)")
    s.set("C3", "=MAX(A1:A4, 100, B1 * 20)")
    s.set("C4", "=SUM(E1:F9) + MIN(E1:E2) + MAX(E3:E3)")
    assert s.get("C1") == Fraction(47, 2)
    assert s.get("C2") == -1
    assert s.get("C3") == 200
    assert s.get("C4") == 0


def test_two_letter_columns():
    s = Sheet()
    s.set("Z1", "1")
    s.set("AA1", "2")
    s.set("AB1", "3")
    s.set("AC2", "=SUM(Y1:AB1)")
    assert s.get("AC2") == 6


def test_error_values():
    s = Sheet()
    s.set("A1", "=1/0")
    s.set("A2", "text")
    s.set("A3", "=A2 + 1")
    s.set("A4", "=SUM(A1:A2)")
    s.set("A5", "=SUM(A2:A3)")
    s.set("A6", "=A3 * 0")
    s.set("A7", "=1/(A9 - A9)")
    assert s.get("A1") == "#DIV/0!"
    assert s.get("A3") == "#VALUE!"
    assert s.get("A4") == "#DIV/0!"
    assert s.get("A5") == "#VALUE!"
    assert s.get("A6") == "#VALUE!"
    assert s.get("A7") == "#DIV/0!"


def test_cycles_and_error_order():
    s = Sheet()
    s.set("A1", "=B1 + 1")
    s.set("B1", "=C1")
    s.set("C1", "=A1")
    s.set("D1", "=D1")
    s.set("E1", "=SUM(E1:E2)")
    assert s.get("A1") == s.get("B1") == s.get("C1") == "#CYCLE!"
    assert s.get("D1") == "#CYCLE!" and s.get("E1") == "#CYCLE!"
    s.set("F1", "=1/0")
    s.set("G1", "=F1 + D1")
    s.set("G2", "=D1 + F1")
    assert s.get("G1") == "#DIV/0!" and s.get("G2") == "#CYCLE!"
    s.set("C1", "5")
    assert s.get("A1") == 6


def test_long_chain():
    s = Sheet()
    s.set("A1", "1")
    for i in range(2, 121):
        s.set(f"A{i}", f"=A{i - 1} + 1")
    assert s.get("A120") == 120
    s.set("B1", "=SUM(A1:A120)")
    assert s.get("B1") == 120 * 121 // 2


def test_syntax_errors_leave_cell_unchanged():
    s = Sheet()
    s.set("A1", "7")
    bad = ["=", "=1 +", "=(1", "=1)", "=a1", "=A0", "=ABC1", "=A1000", "=FOO(1)", "=sum(A1)",
           "=SUM()", "=A1:A2", "=1 2", "=SUM(A1:)", "=2 $ 3", "=SUM(A1:B2 + 1)"]
    for content in bad:
        assert _raises_value_error(s.set, "A1", content), content
    assert s.get("A1") == 7


def test_invalid_cell_names():
    s = Sheet()
    for name in ["a1", "A0", "A01", "ABC1", "1A", "A", "", "A1000"]:
        assert _raises_value_error(s.set, name, "1"), name
        assert _raises_value_error(s.get, name), name
