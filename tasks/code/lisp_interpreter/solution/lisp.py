"""A tiny Lisp interpreter with proper tail calls."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any


class LispError(Exception):
    """Any syntax or evaluation error."""


class Symbol(str):
    """A Lisp symbol (a str subclass so quoted symbols compare equal to Python strings)."""


_TOKEN = re.compile(r"\s*(?:;[^\n]*|([()']|[^\s()';]+))")
_INT = re.compile(r"[+-]?[0-9]+")


def _tokenize(source: str) -> list[str]:
    tokens = []
    pos = 0
    while pos < len(source):
        match = _TOKEN.match(source, pos)
        if match is None or match.end() == pos:  # only trailing whitespace left
            break
        if match.group(1):
            tokens.append(match.group(1))
        pos = match.end()
    return tokens


def _read_all(source: str) -> list[Any]:
    tokens = _tokenize(source)
    pos = 0

    def read() -> Any:
        nonlocal pos
        if pos >= len(tokens):
            raise LispError("unexpected end of input")
        token = tokens[pos]
        pos += 1
        if token == "(":
            items = []
            while True:
                if pos >= len(tokens):
                    raise LispError("missing ')'")
                if tokens[pos] == ")":
                    pos += 1
                    return items
                items.append(read())
        if token == ")":
            raise LispError("unexpected ')'")
        if token == "'":
            return [Symbol("quote"), read()]
        if _INT.fullmatch(token):
            return int(token)
        if token == "#t":
            return True
        if token == "#f":
            return False
        return Symbol(token)

    forms = []
    while pos < len(tokens):
        forms.append(read())
    return forms


class _Env:
    __slots__ = ("vars", "parent")

    def __init__(self, bindings: dict[str, Any], parent: _Env | None) -> None:
        self.vars = bindings
        self.parent = parent

    def find(self, name: str) -> _Env:
        env: _Env | None = self
        while env is not None:
            if name in env.vars:
                return env
            env = env.parent
        raise LispError(f"unbound symbol {name!r}")


class Lambda:
    """A user-defined procedure."""

    def __init__(self, params: list[str], body: list[Any], env: _Env) -> None:
        self.params, self.body, self.env = params, body, env

    def bind(self, args: list[Any]) -> _Env:
        if len(args) != len(self.params):
            raise LispError(f"expected {len(self.params)} arguments, got {len(args)}")
        return _Env(dict(zip(self.params, args, strict=True)), self.env)

    def __call__(self, *args: Any) -> Any:
        env = self.bind(list(args))
        for expr in self.body[:-1]:
            _eval(expr, env)
        return _eval(self.body[-1], env)


def _ints(name: str, args: tuple[Any, ...]) -> None:
    for a in args:
        if not isinstance(a, int) or isinstance(a, bool):
            raise LispError(f"{name}: expected integers")


def _arity(name: str, args: tuple[Any, ...], n: int) -> None:
    if len(args) != n:
        raise LispError(f"{name}: expected {n} arguments, got {len(args)}")


def _builtin_add(*args: Any) -> int:
    _ints("+", args)
    return sum(args)


def _builtin_mul(*args: Any) -> int:
    _ints("*", args)
    result = 1
    for a in args:
        result *= a
    return result


def _builtin_sub(*args: Any) -> int:
    _ints("-", args)
    if not args:
        raise LispError("-: expected at least one argument")
    if len(args) == 1:
        return -args[0]
    result = args[0]
    for a in args[1:]:
        result -= a
    return result


def _divider(name: str, fn: Callable[[int, int], int]) -> Callable[..., int]:
    def divide(*args: Any) -> int:
        _arity(name, args, 2)
        _ints(name, args)
        if args[1] == 0:
            raise LispError(f"{name}: division by zero")
        return fn(args[0], args[1])

    return divide


def _comparison(name: str, fn: Callable[[int, int], bool]) -> Callable[..., bool]:
    def compare(*args: Any) -> bool:
        _arity(name, args, 2)
        _ints(name, args)
        return fn(args[0], args[1])

    return compare


def _list_arg(name: str, value: Any, nonempty: bool = False) -> list[Any]:
    if not isinstance(value, list) or (nonempty and not value):
        raise LispError(f"{name}: expected a {'non-empty ' if nonempty else ''}list")
    return value


def _fixed(name: str, n: int, fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        _arity(name, args, n)
        return fn(*args)

    return call


def _quotient(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_BUILTINS: dict[str, Callable[..., Any]] = {
    "+": _builtin_add,
    "*": _builtin_mul,
    "-": _builtin_sub,
    "quotient": _divider("quotient", _quotient),
    "modulo": _divider("modulo", lambda a, b: a % b),
    "=": _comparison("=", lambda a, b: a == b),
    "<": _comparison("<", lambda a, b: a < b),
    ">": _comparison(">", lambda a, b: a > b),
    "<=": _comparison("<=", lambda a, b: a <= b),
    ">=": _comparison(">=", lambda a, b: a >= b),
    "list": lambda *args: list(args),
    "cons": _fixed("cons", 2, lambda x, lst: [x, *_list_arg("cons", lst)]),
    "car": _fixed("car", 1, lambda lst: _list_arg("car", lst, True)[0]),
    "cdr": _fixed("cdr", 1, lambda lst: _list_arg("cdr", lst, True)[1:]),
    "null?": _fixed("null?", 1, lambda x: x == [] and isinstance(x, list)),
    "length": _fixed("length", 1, lambda lst: len(_list_arg("length", lst))),
    "not": _fixed("not", 1, lambda x: x is False),
    "equal?": _fixed("equal?", 2, lambda a, b: type(a) is type(b) and a == b),
}

_SPECIAL = frozenset({"quote", "if", "define", "lambda", "let", "begin", "and", "or", "set!"})


def _check_params(params: Any) -> list[str]:
    if not isinstance(params, list) or not all(isinstance(p, Symbol) for p in params):
        raise LispError("parameters must be a list of symbols")
    if len(set(params)) != len(params):
        raise LispError("duplicate parameter")
    return list(params)


def _eval(expr: Any, env: _Env) -> Any:
    while True:  # loop instead of recursing for expressions in tail position
        if isinstance(expr, Symbol):
            return env.find(expr).vars[expr]
        if not isinstance(expr, list):
            return expr
        if not expr:
            return []
        head, args = expr[0], expr[1:]
        if isinstance(head, Symbol) and head in _SPECIAL:
            if head == "quote":
                if len(args) != 1:
                    raise LispError("quote: expected 1 argument")
                return args[0]
            if head == "if":
                if len(args) not in (2, 3):
                    raise LispError("if: expected 2 or 3 arguments")
                if _eval(args[0], env) is not False:
                    expr = args[1]
                elif len(args) == 3:
                    expr = args[2]
                else:
                    return None
                continue
            if head == "define":
                if len(args) < 2:
                    raise LispError("define: too few arguments")
                target = args[0]
                if isinstance(target, list):
                    if not target or not isinstance(target[0], Symbol):
                        raise LispError("define: bad function header")
                    env.vars[target[0]] = Lambda(_check_params(target[1:]), args[1:], env)
                    return None
                if not isinstance(target, Symbol) or len(args) != 2:
                    raise LispError("define: bad syntax")
                env.vars[target] = _eval(args[1], env)
                return None
            if head == "set!":
                if len(args) != 2 or not isinstance(args[0], Symbol):
                    raise LispError("set!: bad syntax")
                owner = env.find(args[0])
                owner.vars[args[0]] = _eval(args[1], env)
                return None
            if head == "lambda":
                if len(args) < 2:
                    raise LispError("lambda: expected parameters and a body")
                return Lambda(_check_params(args[0]), args[1:], env)
            if head == "let":
                if len(args) < 2 or not isinstance(args[0], list):
                    raise LispError("let: bad syntax")
                bindings: dict[str, Any] = {}
                for binding in args[0]:
                    well_formed = isinstance(binding, list) and len(binding) == 2
                    if not well_formed or not isinstance(binding[0], Symbol):
                        raise LispError("let: bad binding")
                    if binding[0] in bindings:
                        raise LispError("let: duplicate name")
                    bindings[binding[0]] = _eval(binding[1], env)
                env = _Env(bindings, env)
                for body_expr in args[1:-1]:
                    _eval(body_expr, env)
                expr = args[-1]
                continue
            if head == "begin":
                if not args:
                    return None
                for body_expr in args[:-1]:
                    _eval(body_expr, env)
                expr = args[-1]
                continue
            # and / or
            if not args:
                return head == "and"
            for sub in args[:-1]:
                value = _eval(sub, env)
                if (value is False) == (head == "and"):
                    return value
            expr = args[-1]
            continue
        fn = _eval(head, env)
        values = [_eval(a, env) for a in args]
        if isinstance(fn, Lambda):
            env = fn.bind(values)
            for body_expr in fn.body[:-1]:
                _eval(body_expr, env)
            expr = fn.body[-1]
            continue
        if callable(fn):
            return fn(*values)
        raise LispError(f"not a procedure: {fn!r}")


def evaluate(source: str) -> Any:
    """Evaluate every expression in source in a fresh environment; return the last value."""
    env = _Env(dict(_BUILTINS), None)
    result = None
    for form in _read_all(source):
        result = _eval(form, env)
    return result
