"""Exact arithmetic expression evaluator."""

import re
from collections.abc import Callable, Mapping
from fractions import Fraction


class ExpressionError(ValueError):
    """Raised for syntax errors in an expression."""


_TOKEN = re.compile(r"\s*(?:([0-9]+(?:\.[0-9]+)?(?![0-9.A-Za-z_]))|([A-Za-z_][A-Za-z0-9_]*)|([-+*/%^(),]))")
_FUNCTIONS: dict[str, tuple[int, int | None, Callable[..., Fraction]]] = {
    "abs": (1, 1, abs),
    "min": (1, None, min),
    "max": (1, None, max),
}


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise ExpressionError(f"invalid input at position {pos}")
        number, name, symbol = match.groups()
        if number is not None:
            tokens.append(("num", number))
        elif name is not None:
            tokens.append(("name", name))
        else:
            tokens.append(("sym", symbol))
        pos = match.end()
    tokens.append(("end", ""))
    return tokens


class _Parser:
    def __init__(self, text: str, variables: Mapping[str, int | Fraction]) -> None:
        self.tokens = _tokenize(text)
        self.pos = 0
        self.variables = variables

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.pos]

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expect(self, symbol: str) -> None:
        kind, value = self.take()
        if (kind, value) != ("sym", symbol):
            raise ExpressionError(f"expected {symbol!r}, got {value or 'end of input'!r}")

    def parse(self) -> Fraction:
        value = self.expr()
        if self.peek()[0] != "end":
            raise ExpressionError(f"unexpected {self.peek()[1]!r}")
        return value

    def expr(self) -> Fraction:
        value = self.term()
        while self.peek() in (("sym", "+"), ("sym", "-")):
            op = self.take()[1]
            rhs = self.term()
            value = value + rhs if op == "+" else value - rhs
        return value

    def term(self) -> Fraction:
        value = self.unary()
        while self.peek() in (("sym", "*"), ("sym", "/"), ("sym", "%")):
            op = self.take()[1]
            rhs = self.unary()
            if op == "*":
                value *= rhs
            elif rhs == 0:
                raise ZeroDivisionError("division by zero")
            elif op == "/":
                value /= rhs
            else:
                value %= rhs
        return value

    def unary(self) -> Fraction:
        if self.peek() in (("sym", "+"), ("sym", "-")):
            op = self.take()[1]
            operand = self.unary()
            return operand if op == "+" else -operand
        return self.power()

    def power(self) -> Fraction:
        base = self.primary()
        if self.peek() != ("sym", "^"):
            return base
        self.take()
        exponent = self.unary()
        if exponent.denominator != 1:
            raise ValueError("exponent must be an integer")
        if abs(exponent) > 1000:
            raise ValueError("exponent too large")
        if base == 0 and exponent < 0:
            raise ZeroDivisionError("zero to a negative power")
        return Fraction(base) ** int(exponent)

    def primary(self) -> Fraction:
        kind, value = self.take()
        if kind == "num":
            return Fraction(value)
        if kind == "name":
            if self.peek() == ("sym", "("):
                return self.call(value)
            if value not in self.variables:
                raise NameError(f"unknown variable {value!r}")
            return Fraction(self.variables[value])
        if (kind, value) == ("sym", "("):
            inner = self.expr()
            self.expect(")")
            return inner
        raise ExpressionError(f"unexpected {value or 'end of input'!r}")

    def call(self, name: str) -> Fraction:
        self.expect("(")
        args = [] if self.peek() == ("sym", ")") else [self.expr()]
        while self.peek() == ("sym", ","):
            self.take()
            args.append(self.expr())
        self.expect(")")
        if name not in _FUNCTIONS:
            raise NameError(f"unknown function {name!r}")
        low, high, fn = _FUNCTIONS[name]
        if len(args) < low or (high is not None and len(args) > high):
            raise ExpressionError(f"wrong number of arguments for {name}")
        return Fraction(fn(*args))


def evaluate(expression: str, variables: Mapping[str, int | Fraction] | None = None) -> Fraction:
    """Evaluate `expression` exactly and return a Fraction."""
    return _Parser(expression, variables or {}).parse()

