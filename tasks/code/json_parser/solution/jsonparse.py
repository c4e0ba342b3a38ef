"""A strict JSON parser."""

from typing import Any


class JSONError(ValueError):
    """Invalid JSON; `pos` is the index where the problem was detected."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(f"{message} at position {pos}")
        self.pos = pos


_WHITESPACE = " \t\n\r"
_DIGITS = "0123456789"
_HEX = "0123456789abcdefABCDEF"
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def error(self, message: str, pos: int | None = None) -> JSONError:
        return JSONError(message, self.i if pos is None else pos)

    def skip_ws(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in _WHITESPACE:
            self.i += 1

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def parse(self) -> Any:
        self.skip_ws()
        value = self.value()
        self.skip_ws()
        if self.i != len(self.text):
            raise self.error("extra data")
        return value

    def value(self) -> Any:
        ch = self.peek()
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.array()
        if ch == '"':
            return self.string()
        if ch == "-" or (ch and ch in _DIGITS):
            return self.number()
        if ch in _LITERALS:
            word, result = _LITERALS[ch]
            for offset, expected in enumerate(word):
                pos = self.i + offset
                if pos >= len(self.text) or self.text[pos] != expected:
                    raise self.error(f"invalid literal, expected {word!r}", pos)
            self.i += len(word)
            return result
        raise self.error("expected a value")

    def digits(self) -> None:
        if not (self.peek() and self.peek() in _DIGITS):
            raise self.error("expected a digit")
        while self.peek() and self.peek() in _DIGITS:
            self.i += 1

    def number(self) -> int | float:
        start = self.i
        if self.peek() == "-":
            self.i += 1
        if self.peek() == "0":
            self.i += 1
        else:
            self.digits()
        is_float = False
        if self.peek() == ".":
            is_float = True
            self.i += 1
            self.digits()
        if self.peek() and self.peek() in "eE":
            is_float = True
            self.i += 1
            if self.peek() and self.peek() in "+-":
                self.i += 1
            self.digits()
        literal = self.text[start:self.i]
        return float(literal) if is_float else int(literal)

    def hex4(self, backslash: int) -> int:
        digits = self.text[self.i:self.i + 4]
        if len(digits) != 4 or any(c not in _HEX for c in digits):
            raise self.error("malformed \\u escape", backslash)
        self.i += 4
        return int(digits, 16)

    def string(self) -> str:
        self.i += 1  # opening quote
        out: list[str] = []
        while True:
            if self.i >= len(self.text):
                raise self.error("unterminated string")
            ch = self.text[self.i]
            if ch == '"':
                self.i += 1
                return "".join(out)
            if ord(ch) < 0x20:
                raise self.error("control character in string")
            if ch != "\\":
                out.append(ch)
                self.i += 1
                continue
            backslash = self.i
            self.i += 1
            esc = self.peek()
            if esc in _SIMPLE_ESCAPES and esc:
                out.append(_SIMPLE_ESCAPES[esc])
                self.i += 1
            elif esc == "u":
                self.i += 1
                code = self.hex4(backslash)
                if 0xDC00 <= code <= 0xDFFF:
                    raise self.error("lone low surrogate", backslash)
                if 0xD800 <= code <= 0xDBFF:
                    if self.text[self.i:self.i + 2] != "\\u":
                        raise self.error("unpaired high surrogate", backslash)
                    second = self.i
                    self.i += 2
                    low = self.hex4(second)
                    if not 0xDC00 <= low <= 0xDFFF:
                        raise self.error("unpaired high surrogate", backslash)
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                out.append(chr(code))
            else:
                raise self.error("invalid escape", backslash)

    def array(self) -> list[Any]:
        self.i += 1
        items: list[Any] = []
        self.skip_ws()
        if self.peek() == "]":
            self.i += 1
            return items
        while True:
            self.skip_ws()
            items.append(self.value())
            self.skip_ws()
            ch = self.peek()
            self.i += 1
            if ch == "]":
                return items
            if ch != ",":
                self.i -= 1
                raise self.error("expected ',' or ']'")

    def obj(self) -> dict[str, Any]:
        self.i += 1
        result: dict[str, Any] = {}
        self.skip_ws()
        if self.peek() == "}":
            self.i += 1
            return result
        while True:
            self.skip_ws()
            if self.peek() != '"':
                raise self.error("expected a string key")
            key = self.string()
            self.skip_ws()
            if self.peek() != ":":
                raise self.error("expected ':'")
            self.i += 1
            self.skip_ws()
            result[key] = self.value()
            self.skip_ws()
            ch = self.peek()
            self.i += 1
            if ch == "}":
                return result
            if ch != ",":
                self.i -= 1
                raise self.error("expected ',' or '}'")


def parse(text: str) -> Any:
    """Parse a JSON document."""
    return _Parser(text).parse()
