"""The subject: runs in the grading sandbox, imports the module(s) under test and answers the test driver.

Started by polar once per hidden test as `python3 -I subject.py SOCKET WORKDIR FILE...`, with that test's
token on stdin. It connects to the driver first, so whatever the module does at import (exit, loop, print) happens
on a live connection the driver watches with its own clock. Everything here is the module's to tamper with: the
driver trusts none of it, and only decodes what arrives (see `code_rpc`). Standalone, stdlib only.
"""

from __future__ import annotations

import builtins
import importlib.util
import operator
import os
import socket
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from code_rpc import Link, ProtocolError  # noqa: E402

VALUE_BASES = (str, int, float, bytes, tuple, list, dict, set, frozenset)
"""An instance of a class built on one of these travels as its plain value plus a handle (a str subclass still
compares as a str on the driver; its own attributes are still reachable)."""
OPS = {
    "call": lambda f, *a, **k: f(*a, **k),
    "method": lambda obj, name, *a, **k: getattr(obj, name)(*a, **k),
    "getattr": getattr, "setattr": setattr, "delattr": delattr,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
    "ge": operator.ge, "hash": hash, "len": len, "bool": bool, "str": str, "repr": repr, "iter": iter,
    "next": next, "contains": operator.contains, "getitem": operator.getitem, "setitem": operator.setitem,
    "delitem": operator.delitem,
}


class DriverObject:
    """A test's object lent to the module (an iterator, a key function): using it asks the driver."""

    def __init__(self, link: DriverLink, ident: int, kind: str):
        self._link, self._id, self._kind = link, ident, kind

    def __call__(self, *args, **kwargs):
        return self._link.request("call", (self, *args), kwargs)

    def __iter__(self):
        return self._link.request("iter", (self,))

    def __next__(self):
        return self._link.request("next", (self,))

    def __repr__(self) -> str:
        return f"<the test's {self._kind}>"


def describe_class(cls: type) -> list:
    """The "C" node fields: name, kind, the builtin bases the driver's mirror class takes, and the methods."""
    if issubclass(cls, BaseException):
        kind = "exception"
        bases = [c.__name__ for c in cls.__mro__ if getattr(builtins, c.__name__, None) is c]
    elif issubclass(cls, VALUE_BASES):
        kind, bases = "value", [next(c for c in cls.__mro__ if c in VALUE_BASES).__name__]
    else:
        kind, bases = "object", []
    methods, seen = [], set()
    for klass in cls.__mro__:
        if klass.__module__ == "builtins":
            continue
        for name, value in vars(klass).items():
            if name not in seen:
                seen.add(name)
                if isinstance(value, types.FunctionType) and not name.startswith("__"):
                    methods.append(name)
    return [f"{cls.__module__}.{cls.__qualname__}"[:200], kind, bases, methods]


class DriverLink(Link):
    def encode_other(self, x, enc):
        if isinstance(x, DriverObject):
            return None, enc.add(["y", x._id])
        if isinstance(x, type):
            return None, enc.add(["C", self.export(x), *describe_class(x)])
        if isinstance(x, VALUE_BASES):
            base = next(c for c in type(x).__mro__ if c in VALUE_BASES)
            value = base(x.items()) if base is dict else base(x)
            return None, enc.add(["w", self.export(x), enc.ref(type(x)), enc.ref(value)])
        kind = type(x)
        cls = kind.__name__ if kind.__module__ == "builtins" else enc.ref(kind)
        return None, enc.add(["o", self.export(x), cls])

    def decode_handle(self, tag, ident, fields):
        if tag != "o" or len(fields) != 1 or type(fields[0]) is not str:
            raise ProtocolError(f"unexpected {tag!r} node from the driver")
        if ident not in self.imports:
            self.imports[ident] = DriverObject(self, ident, fields[0][:100])
        return self.imports[ident]

    def perform(self, op, args, kwargs):
        if op not in OPS:
            raise ProtocolError(f"unknown request {op!r}")
        return OPS[op](*args, **kwargs)


def load(workdir: str, file: str) -> types.ModuleType:
    """Import one file of the module under test by its path, under its stem (another file may import it)."""
    stem, path = file[:-3], os.path.join(workdir, file)
    module = sys.modules.get(stem)
    if module is not None and getattr(module, "__file__", None) == path:
        return module
    spec = importlib.util.spec_from_file_location(stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    sock_path, workdir, *files = sys.argv[1:]
    token = sys.stdin.readline().strip()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(sock_path)
    link = DriverLink(sock)
    link.send(["h", token])
    os.chdir(workdir)
    sys.path.insert(0, workdir)
    try:
        try:
            modules = tuple(load(workdir, f) for f in files)
        except BaseException as e:  # the import's failure is the answer
            link.reply(False, e, [])
        else:
            link.reply(True, modules, [])
        while True:
            link.serve(link.recv())
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
