from fractions import Fraction

from expr import ExpressionError, evaluate


def _raises(exc_type, expression, variables=None):
    try:
        evaluate(expression, variables)
    except exc_type:
        return True
    return False


def test_basic_arithmetic_and_precedence():
    assert evaluate("1 + 2 * 3") == 7
    assert evaluate("(1 + 2) * 3") == 9
    assert evaluate("10 - 4 - 3") == 3
    assert evaluate("2 * 3 / 4") == Fraction(3, 2)
    assert evaluate(" \t7\n") == 7
    assert isinstance(evaluate("1 + 1"), Fraction)


def test_exact_decimals_and_division():
    assert evaluate("0.1 + 0.2") == Fraction(3, 10)
    assert evaluate("1 / 3 + 1 / 6") == Fraction(1, 2)
    assert evaluate("007.50") == Fraction(15, 2)


def test_unary_and_power_rules():
    assert evaluate("-2^2") == -4
    assert evaluate("(-2)^2") == 4
    assert evaluate("2^-1") == Fraction(1, 2)
    assert evaluate("2^3^2") == 512
    assert evaluate("2*-3") == -6
    assert evaluate("--1") == 1
    assert evaluate("-+-3") == 3
    assert evaluate("0^0") == 1
    assert evaluate("(2/3)^2") == Fraction(4, 9)


def test_modulo():
    assert evaluate("7 % 3") == 1
    assert evaluate("-7 % 3") == 2
    assert evaluate("7 % -3") == -2
    assert evaluate("5.5 % 2") == Fraction(3, 2)
    assert evaluate("10 - 7 % 4 * 2") == 4


def test_variables_and_functions():
    env = {"x": 3, "y": Fraction(1, 2), "min": 10, "_tmp1": 4}
    assert evaluate("x * y + 1", env) == Fraction(5, 2)
    assert evaluate("min + 1", env) == 11
    assert evaluate("min(x, y, 2)", env) == Fraction(1, 2)
    assert evaluate("max(1, -x, _tmp1 ^ 2)", env) == 16
    assert evaluate("abs(-x - 1)", env) == 4
    assert evaluate("max(-(1), 2*(3 - 4))") == -1


def test_runtime_errors():
    assert _raises(ZeroDivisionError, "1 / (2 - 2)")
    assert _raises(ZeroDivisionError, "5 % 0")
    assert _raises(ZeroDivisionError, "0 ^ -1")
    assert _raises(NameError, "x + 1")
    assert _raises(NameError, "sqrt(4)")
    assert _raises(ValueError, "2 ^ (1/2)")
    assert _raises(ValueError, "2 ^ 1001")


def test_syntax_errors():
    bad = ["", "   ", "1 +", "(1 + 2", "1 + 2)", "2(3)", "2 x", ".5", "5.", "1e3", "3 $ 4",
           "1 ** 2", "\u0661", "abs()", "min()", "abs(1, 2)", "max(1,)", "(,)", "1 2", "4 // 2", "()"]
    for text in bad:
        assert _raises(ExpressionError, text, {"x": 1}), text
    assert issubclass(ExpressionError, ValueError)


def test_deep_nesting_and_long_chain():
    assert evaluate("(" * 50 + "1" + ")" * 50) == 1
    assert evaluate(" + ".join(["1"] * 500)) == 500
