"""A small spreadsheet engine."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

_CELL = re.compile(r"[A-Z]{1,2}[1-9][0-9]{0,2}")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_TOKEN = re.compile(r"\s*(?:([0-9]+(?:\.[0-9]+)?)|([A-Za-z]+[0-9]*)|([-+*/():,]))")
_FUNCTIONS = ("SUM", "MIN", "MAX")


class _CellError(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _split_cell(name: str) -> tuple[int, int]:
    letters = name.rstrip("0123456789")
    col = 0
    for ch in letters:
        col = col * 26 + (ord(ch) - 64)
    return int(name[len(letters):]), col


def _cell_name(row: int, col: int) -> str:
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return f"{letters}{row}"


def _check_cell(name: str) -> str:
    if not isinstance(name, str) or not _CELL.fullmatch(name):
        raise ValueError(f"invalid cell name {name!r}")
    return name


# AST: ("num", Fraction) | ("ref", name) | ("neg", node) | ("bin", op, l, r) | ("call", fn, [args])
#      arg: node | ("range", a, b)


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if not match:
                raise ValueError(f"bad character at {pos}")
            number, word, symbol = match.groups()
            if number is not None:
                self.tokens.append(("num", number))
            elif word is not None:
                self.tokens.append(("word", word))
            else:
                self.tokens.append(("sym", symbol))
            pos = match.end()
        self.tokens.append(("end", ""))
        self.i = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i]

    def take(self) -> tuple[str, str]:
        self.i += 1
        return self.tokens[self.i - 1]

    def expect(self, symbol: str) -> None:
        if self.take() != ("sym", symbol):
            raise ValueError(f"expected {symbol!r}")

    def parse(self) -> Any:
        node = self.expr()
        if self.peek()[0] != "end":
            raise ValueError("unexpected trailing input")
        return node

    def expr(self) -> Any:
        node = self.term()
        while self.peek() in (("sym", "+"), ("sym", "-")):
            node = ("bin", self.take()[1], node, self.term())
        return node

    def term(self) -> Any:
        node = self.factor()
        while self.peek() in (("sym", "*"), ("sym", "/")):
            node = ("bin", self.take()[1], node, self.factor())
        return node

    def factor(self) -> Any:
        if self.peek() in (("sym", "-"), ("sym", "+")):
            op = self.take()[1]
            inner = self.factor()
            return ("neg", inner) if op == "-" else inner
        return self.primary()

    def primary(self) -> Any:
        kind, value = self.take()
        if kind == "num":
            return ("num", Fraction(value))
        if kind == "word":
            if value in _FUNCTIONS and self.peek() == ("sym", "("):
                self.take()
                args = [self.arg()]
                while self.peek() == ("sym", ","):
                    self.take()
                    args.append(self.arg())
                self.expect(")")
                return ("call", value, args)
            return ("ref", _check_cell(value))
        if (kind, value) == ("sym", "("):
            node = self.expr()
            self.expect(")")
            return node
        raise ValueError(f"unexpected token {value!r}")

    def arg(self) -> Any:
        kind, value = self.peek()
        if kind == "word" and self.tokens[self.i + 1] == ("sym", ":"):
            self.i += 2
            end_kind, end_value = self.take()
            if end_kind != "word":
                raise ValueError("bad range")
            return ("range", _check_cell(value), _check_cell(end_value))
        return self.expr()


class Sheet:
    """A grid of cells with numbers, text and formulas."""

    def __init__(self) -> None:
        """Create an empty sheet."""
        # name -> ("num", Fraction) | ("text", str) | ("formula", ast)
        self._cells: dict[str, tuple[str, Any]] = {}

    def set(self, cell: str, content: str) -> None:
        """Store content in cell; raise ValueError for an invalid formula or cell name."""
        _check_cell(cell)
        if content == "":
            self._cells.pop(cell, None)
        elif content.startswith("="):
            self._cells[cell] = ("formula", _Parser(content[1:]).parse())
        elif _NUMBER.fullmatch(content):
            self._cells[cell] = ("num", Fraction(content))
        else:
            self._cells[cell] = ("text", content)

    def get(self, cell: str) -> Fraction | str | None:
        """Return the current value of cell."""
        _check_cell(cell)
        try:
            return self._value(cell, set(), {})
        except _CellError as err:
            return err.code

    # -- evaluation -------------------------------------------------------------------------

    def _value(self, cell: str, active: set[str], memo: dict[str, Any]) -> Fraction | str | None:
        """Value of a cell; raises _CellError for formula errors."""
        entry = self._cells.get(cell)
        if entry is None:
            return None
        kind, payload = entry
        if kind != "formula":
            return payload
        if cell in memo:
            return memo[cell]
        if cell in active:
            raise _CellError("#CYCLE!")
        active.add(cell)
        try:
            result = self._eval(payload, active, memo)
        finally:
            active.discard(cell)
        memo[cell] = result
        return result

    def _number(self, cell: str, active: set[str], memo: dict[str, Any]) -> Fraction | None:
        value = self._value(cell, active, memo)
        if isinstance(value, str):
            raise _CellError("#VALUE!")
        return value

    def _eval(self, node: Any, active: set[str], memo: dict[str, Any]) -> Fraction:
        kind = node[0]
        if kind == "num":
            return node[1]
        if kind == "ref":
            value = self._number(node[1], active, memo)
            return Fraction(0) if value is None else value
        if kind == "neg":
            return -self._eval(node[1], active, memo)
        if kind == "bin":
            _, op, left, right = node
            a = self._eval(left, active, memo)
            b = self._eval(right, active, memo)
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if b == 0:
                raise _CellError("#DIV/0!")
            return a / b
        _, func, args = node
        numbers: list[Fraction] = []
        for arg in args:
            if arg[0] == "range":
                (r1, c1), (r2, c2) = _split_cell(arg[1]), _split_cell(arg[2])
                for row in range(min(r1, r2), max(r1, r2) + 1):
                    for col in range(min(c1, c2), max(c1, c2) + 1):
                        value = self._number(_cell_name(row, col), active, memo)
                        if value is not None:
                            numbers.append(value)
            else:
                numbers.append(self._eval(arg, active, memo))
        if not numbers:
            return Fraction(0)
        if func == "SUM":
            return sum(numbers, Fraction(0))
        return min(numbers) if func == "MIN" else max(numbers)
