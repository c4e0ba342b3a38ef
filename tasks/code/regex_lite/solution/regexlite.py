"""A small regular-expression engine (Thompson NFA simulation)."""

from __future__ import annotations

from collections.abc import Callable

Pred = Callable[[str], bool]

_DIGITS = frozenset("0123456789")
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_SPACE = frozenset(" \t\n\r\f\v")
_SPECIAL = frozenset(".*+?|()[\\")
_QUANTIFIERS = frozenset("*+?")


# ---------------------------------------------------------------- parsing
# AST nodes: ("pred", fn) | ("seq", [nodes]) | ("alt", [nodes]) | ("star"|"plus"|"opt", node)


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def parse(self) -> tuple:
        node = self.alternation()
        if self.i != len(self.p):  # only possible on an unmatched ')'
            raise ValueError(f"unbalanced ')' at {self.i}")
        return node

    def alternation(self) -> tuple:
        branches = [self.sequence()]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self) -> tuple:
        items: list[tuple] = []
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            ch = self.p[self.i]
            if ch in _QUANTIFIERS:
                raise ValueError(f"nothing to repeat at {self.i}")
            atom = self.atom()
            if self.i < len(self.p) and self.p[self.i] in _QUANTIFIERS:
                kind = {"*": "star", "+": "plus", "?": "opt"}[self.p[self.i]]
                self.i += 1
                if self.i < len(self.p) and self.p[self.i] in _QUANTIFIERS:
                    raise ValueError(f"multiple repeat at {self.i}")
                atom = (kind, atom)
            items.append(atom)
        return ("seq", items)

    def atom(self) -> tuple:
        ch = self.p[self.i]
        self.i += 1
        if ch == "(":
            inner = self.alternation()
            if self.i >= len(self.p) or self.p[self.i] != ")":
                raise ValueError("missing ')'")
            self.i += 1
            return inner
        if ch == ".":
            return ("pred", lambda c: True)
        if ch == "[":
            return ("pred", self.char_class())
        if ch == "\\":
            if self.i >= len(self.p):
                raise ValueError("pattern ends with a backslash")
            esc = self.p[self.i]
            self.i += 1
            sets = {"d": _DIGITS, "w": _WORD, "s": _SPACE}
            if esc in sets:
                members = sets[esc]
                return ("pred", lambda c: c in members)
            return ("pred", lambda c: c == esc)
        return ("pred", lambda c: c == ch)

    def char_class(self) -> Pred:
        negated = self.i < len(self.p) and self.p[self.i] == "^"
        if negated:
            self.i += 1
        members: list[tuple[str, bool]] = []  # (char, escaped)
        first = True
        while True:
            if self.i >= len(self.p):
                raise ValueError("unterminated character class")
            ch = self.p[self.i]
            if ch == "]" and not first:
                self.i += 1
                break
            if ch == "\\":
                if self.i + 1 >= len(self.p):
                    raise ValueError("unterminated character class")
                members.append((self.p[self.i + 1], True))
                self.i += 2
            else:
                members.append((ch, False))
                self.i += 1
            first = False
        chars: set[str] = set()
        ranges: list[tuple[str, str]] = []
        k = 0
        while k < len(members):
            if k + 2 < len(members) and members[k + 1] == ("-", False):
                low, high = members[k][0], members[k + 2][0]
                if low > high:
                    raise ValueError(f"bad range {low}-{high}")
                ranges.append((low, high))
                k += 3
            else:
                chars.add(members[k][0])
                k += 1
        frozen = frozenset(chars)

        def pred(c: str) -> bool:
            inside = c in frozen or any(lo <= c <= hi for lo, hi in ranges)
            return inside != negated

        return pred


# ---------------------------------------------------------------- NFA


class _State:
    __slots__ = ("pred", "out", "eps")

    def __init__(self) -> None:
        self.pred: Pred | None = None
        self.out: _State | None = None
        self.eps: list[_State] = []


def _build(node: tuple, nxt: _State) -> _State:
    """Build states for node so that finishing it continues at nxt; return the entry state."""
    kind = node[0]
    if kind == "pred":
        state = _State()
        state.pred, state.out = node[1], nxt
        return state
    if kind == "seq":
        entry = nxt
        for child in reversed(node[1]):
            entry = _build(child, entry)
        return entry
    if kind == "alt":
        split = _State()
        split.eps = [_build(child, nxt) for child in node[1]]
        return split
    split = _State()
    if kind == "opt":
        split.eps = [_build(node[1], nxt), nxt]
        return split
    body = _build(node[1], split)  # star / plus loop back through split
    split.eps = [body, nxt]
    return split if kind == "star" else body


class _Compiled:
    def __init__(self, pattern: str) -> None:
        self.accept = _State()
        self.start = _build(_Parser(pattern).parse(), self.accept)

    @staticmethod
    def closure(states: list[_State]) -> set[_State]:
        seen: set[_State] = set()
        stack = list(states)
        while stack:
            state = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            stack.extend(state.eps)
        return seen

    def step(self, states: set[_State], ch: str) -> set[_State]:
        return self.closure([s.out for s in states if s.pred is not None and s.pred(ch)])

    def longest_from(self, text: str, start: int) -> int | None:
        current = self.closure([self.start])
        best = start if self.accept in current else None
        for pos in range(start, len(text)):
            current = self.step(current, text[pos])
            if not current:
                break
            if self.accept in current:
                best = pos + 1
        return best


def match(pattern: str, text: str) -> bool:
    """Return True if the whole text matches pattern."""
    compiled = _Compiled(pattern)
    current = compiled.closure([compiled.start])
    for ch in text:
        current = compiled.step(current, ch)
        if not current:
            return False
    return compiled.accept in current


def search(pattern: str, text: str) -> tuple[int, int] | None:
    """Return the leftmost-longest match span of pattern in text, or None."""
    compiled = _Compiled(pattern)
    for start in range(len(text) + 1):
        end = compiled.longest_from(text, start)
        if end is not None:
            return start, end
    return None
