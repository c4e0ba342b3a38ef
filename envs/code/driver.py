"""The Code-v0 test driver: runs the hidden tests on the host, against stand-ins for the module under test.

polar (`polar.envs.code`) starts it as `python -I -S driver.py` with a clean environment, in a private
temp directory holding the hidden tests, and sends its configuration as one JSON line on stdin. Standalone, stdlib
only. No code of the module under test ever runs here. For each test the driver prints `{"run": i, "token": t}`;
polar launches a fresh subject (`subject.py`) in the grading sandbox, which connects to the driver's Unix
socket, shows the token and imports the module. The test's `import <module>` finds a stand-in module whose
attributes are requests to that subject (`code_rpc`); the test runs here, on values decoded into builtin types or
stand-ins, under the driver's own clock, and its verdict is printed on stdout, which nothing else writes.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import select
import signal
import socket
import sys
import time
import traceback
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from code_rpc import EXCEPTIONS, Aborted, Link, PeerGone, ProtocolError  # noqa: E402

VALUE_BASES = {c.__name__: c for c in (str, int, float, bytes, tuple, list, dict, set, frozenset)}
HELLO_S = 2.0
"""How long a connection may take to show its token."""
IDLE_S = 0.25
"""How often a wait for the subject checks whether polar saw its process end (a child it forked may keep the
connection open)."""
MAX_PENDING = 16
LAUNCHES = 2
"""Subjects started for one test until one connects. Nothing of the module has run before its subject connects
(it connects, then imports), so a subject that never connected is the machine's failure, not the module's."""
MEMORY_BYTES = 4 << 30
"""The driver's address space: what the subject sends it decodes in memory."""


class TestTimeout(PeerGone):
    """The test ran past its time (raised by SIGALRM wherever the driver is; a `PeerGone`, so serving a request of
    the subject does not answer it but stops)."""


def _alarm(signum, frame):
    raise TestTimeout


def _ref(x) -> tuple | None:
    """(link, handle id) of a stand-in, else None."""
    if isinstance(x, (Remote, ValueRemote, RemoteClass)):
        return vars(x).get("_polar_ref")
    return None


def _request(target, op: str, /, *args, **kwargs):
    link, _ = _ref(target)
    return link.request(op, (target, *args), kwargs)


def _typed(value, kind: type):
    if type(value) is not kind:
        raise TypeError(f"the module answered a {type(value).__name__} where Python requires a {kind.__name__}")
    return value


def _compare(op: str):
    def compare(self, other):
        theirs = _ref(other)
        if theirs is None or theirs[0] is not _ref(self)[0]:
            return NotImplemented  # a remote object never equals a local value: a list must be a real list
        return _typed(_request(self, op, other), bool)
    compare.__name__ = f"__{op}__"
    return compare


def _forward(name: str):
    """A mirror class's method: one request that calls the remote object's method of that name."""
    def method(self, *args, **kwargs):
        return _request(self, "method", name, *args, **kwargs)
    method.__name__ = name
    return method


def _remote_getattr(self, name: str):
    if name.startswith(("__", "_polar")):
        raise AttributeError(name)
    return _request(self, "getattr", name)


class Remote:
    """A stand-in for an object that lives in the subject: each use of it is one request."""

    __getattr__ = _remote_getattr

    def __setattr__(self, name: str, value) -> None:
        if name.startswith("__"):
            super().__setattr__(name, value)
        else:
            _request(self, "setattr", name, value)

    def __delattr__(self, name: str) -> None:
        _request(self, "delattr", name)

    def __call__(self, *args, **kwargs):
        return _request(self, "call", *args, **kwargs)

    __eq__, __ne__, __lt__ = _compare("eq"), _compare("ne"), _compare("lt")
    __le__, __gt__, __ge__ = _compare("le"), _compare("gt"), _compare("ge")

    def __hash__(self) -> int:
        return _typed(_request(self, "hash"), int)

    def __bool__(self) -> bool:
        return _typed(_request(self, "bool"), bool)

    def __len__(self) -> int:
        return _typed(_request(self, "len"), int)

    def __contains__(self, item) -> bool:
        return _typed(_request(self, "contains", item), bool)

    def __str__(self) -> str:
        return _typed(_request(self, "str"), str)

    def __repr__(self) -> str:
        link, ident = _ref(self)
        if link.broken:
            return f"<object #{ident} of the module under test>"
        return _typed(_request(self, "repr"), str)

    def __iter__(self):
        return _request(self, "iter")

    def __next__(self):
        return _request(self, "next")

    def __getitem__(self, key):
        return _request(self, "getitem", key)

    def __setitem__(self, key, value) -> None:
        _request(self, "setitem", key, value)

    def __delitem__(self, key) -> None:
        _request(self, "delitem", key)


class ValueRemote:
    """Base of mirrors of the module's subclasses of builtin values (a NamedTuple, a str subclass): the stand-in is
    the plain value itself, so comparisons and operators run here, on it. A method the module's class defines runs
    in the module, builtin name or not (a dict subclass's own `values()`), as it would in process; other attributes
    are requests."""

    __getattr__ = _remote_getattr


class RemoteClass(type):
    """The metaclass of mirror classes: a real local class (`isinstance`, `except mod.Error:` work), whose calls
    and class attributes are requests."""

    def __call__(cls, *args, **kwargs):
        return _request(cls, "call", *args, **kwargs)

    __getattr__ = _remote_getattr

    def __repr__(cls) -> str:
        return f"<class {cls.__module__}.{cls.__qualname__} of the module under test>"


class RemoteModule(types.ModuleType):
    """What the test's `import <module>` finds: its attributes are the subject module's."""

    def __init__(self, name: str, remote: Remote):
        super().__init__(name)
        self._polar_remote = remote

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._polar_remote, name)


def _names(value, what: str) -> list[str]:
    if type(value) is not list or not all(type(v) is str and v.isidentifier() for v in value):
        raise ProtocolError(f"bad {what} in a class description")
    return value


class SubjectLink(Link):
    """The driver's end: stand-ins for the subject's objects; the test's iterators and callables lent to it."""

    imported: bool | None = None
    """Whether the subject imported the module under test (None: not known yet)."""

    def __init__(self, sock: socket.socket, inbox: Inbox, launch: int):
        super().__init__(sock)
        self.inbox, self.launch = inbox, launch

    def idle(self) -> None:
        self.inbox.check()
        if self.launch in self.inbox.ended:
            raise self.fail("the subject process ended (a process it left behind still holds the connection)")

    def encode_other(self, x, enc):
        ref = _ref(x)
        if ref is not None:
            if ref[0] is not self:
                raise TypeError("an object of another test's subject cannot be passed")
            return None, enc.add(["y", ref[1]])
        for tag, base in (("l", list), ("t", tuple), ("s", set), ("f", frozenset), ("d", dict)):
            if isinstance(x, base):
                return tag, x
        for base in (str, int, float, bytes):
            if isinstance(x, base):
                return None, enc.ref(base(x))
        if callable(x) or hasattr(type(x), "__next__") or hasattr(type(x), "__iter__"):
            return None, enc.add(["o", self.export(x), type(x).__name__])
        raise TypeError(f"a {type(x).__name__} cannot be passed to the module under test")

    def decode_handle(self, tag, ident, fields):
        if tag == "C":
            return self.imports[ident] if ident in self.imports else self._mirror(ident, fields)
        if tag == "w":
            return self._value(ident, fields)
        if ident in self.imports:
            return self.imports[ident]
        if len(fields) != 1:
            raise ProtocolError("bad object node")
        cls = fields[0]
        if type(cls) is str:
            obj = object.__new__(Remote)
        elif _ref(cls) is not None and vars(cls).get("_polar_kind") in ("object", "exception"):
            obj = vars(cls)["_polar_new"](cls)
        else:
            raise ProtocolError("an object node names no class")
        vars(obj)["_polar_ref"] = (self, ident)
        self.imports[ident] = obj
        return obj

    def _mirror(self, ident: int, fields: list) -> RemoteClass:
        if len(fields) != 4 or type(fields[0]) is not str or fields[1] not in ("object", "exception", "value"):
            raise ProtocolError("bad class description")
        name, kind = fields[0][:200], fields[1]
        bases, methods = _names(fields[2], "bases"), _names(fields[3], "methods")
        module, _, qualname = name.rpartition(".")
        if kind == "exception":
            found = [EXCEPTIONS[b] for b in bases if b in EXCEPTIONS]
            builtin = [c for c in found if not any(o is not c and issubclass(o, c) for o in found)] or [Aborted]
            new = builtin[0].__new__
        elif kind == "value":
            if len(bases) != 1 or bases[0] not in VALUE_BASES:
                raise ProtocolError("a value class names no builtin value base")
            builtin, new = [VALUE_BASES[bases[0]]], None
        else:
            builtin, new = [], object.__new__
        namespace = {name: _forward(name) for name in methods if not name.startswith(("__", "_polar"))}
        namespace |= {"__module__": module or "?", "__qualname__": qualname, "_polar_ref": (self, ident),
                      "_polar_kind": kind, "_polar_new": new}
        head = ValueRemote if kind == "value" else Remote
        try:
            cls = RemoteClass(qualname, (head, *builtin), namespace)
        except TypeError:  # builtin bases whose layouts clash: keep the most derived one
            cls = RemoteClass(qualname, (head, builtin[0]), namespace)
        self.imports[ident] = cls
        return cls

    def _value(self, ident: int, fields: list):
        if len(fields) != 2 or _ref(fields[0]) is None or vars(fields[0]).get("_polar_kind") != "value":
            raise ProtocolError("bad value node")
        cls, value = fields
        base = next(b for b in cls.__mro__ if b in VALUE_BASES.values())
        if type(value) is not base:
            raise ProtocolError(f"a {cls.__qualname__} must arrive as a {base.__name__}")
        obj = base.__new__(cls, value)
        if base in (list, dict, set):
            base.__init__(obj, value)
        vars(obj)["_polar_ref"] = (self, ident)
        return obj

    def perform(self, op, args, kwargs):
        """The subject may only iterate and call what the test lent it."""
        if op not in ("call", "iter", "next") or not args or id(args[0]) not in self.export_ids or \
                (kwargs and op != "call"):
            raise ProtocolError(f"the driver serves no {op!r} request on that")
        target, rest = args[0], args[1:]
        if op == "call":
            return target(*rest, **kwargs)
        return iter(target) if op == "iter" else next(target)


class Inbox:
    """polar's lines on stdin: the configuration, then `{"ended": i}` when subject i's process ended."""

    def __init__(self) -> None:
        self.fd, self.pending, self.ended = sys.stdin.fileno(), b"", set()
        self.config: dict | None = None

    def configuration(self) -> dict:
        while self.config is None:
            self.read()
        return self.config

    def check(self) -> None:
        """Read what polar has sent, if anything."""
        if select.select([self.fd], [], [], 0)[0]:
            self.read()

    def read(self) -> None:
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            sys.exit("polar closed the driver's stdin")
        self.pending += chunk
        while b"\n" in self.pending:
            line, _, self.pending = self.pending.partition(b"\n")
            if self.config is None:
                self.config = json.loads(line)
            else:
                self.ended.add(json.loads(line)["ended"])


def accept(listener: socket.socket, inbox: Inbox, launch: int, token: str, wait_s: float,
           violations: list[str]) -> SubjectLink | str:
    """The connection of subject `launch` (it showed `token`), or why there is none. Connections that show no
    token or another one (processes an earlier subject left behind) are dropped without holding up the right one;
    one that sends something other than a greeting adds to `violations`."""
    deadline = time.monotonic() + wait_s
    pending: dict[socket.socket, tuple[SubjectLink, float]] = {}
    try:
        while True:
            now = time.monotonic()
            for conn, (_, until) in list(pending.items()):
                if until <= now:
                    conn.close()
                    del pending[conn]
            if launch in inbox.ended:
                return "the subject process ended before it connected"
            if now >= deadline:
                return f"no subject connected within {wait_s:g}s"
            timeout = min([deadline, *(until for _, until in pending.values())]) - now
            ready, _, _ = select.select([listener, inbox.fd, *pending], [], [], timeout)
            if inbox.fd in ready:
                inbox.read()
            if listener in ready:
                conn, _ = listener.accept()
                conn.setblocking(False)
                if len(pending) >= MAX_PENDING:
                    oldest = next(iter(pending))
                    oldest.close()
                    del pending[oldest]
                pending[conn] = (SubjectLink(conn, inbox, launch), time.monotonic() + HELLO_S)  # from now, not the wait
            for conn in [c for c in ready if c in pending]:
                link = pending[conn][0]
                try:
                    hello = link.poll()
                except PeerGone:
                    hello = []
                if hello is None:
                    continue
                del pending[conn]
                if hello == ["h", token]:
                    conn.settimeout(IDLE_S)
                    return link
                if link.violation or len(hello) != 2 or hello[0] != "h" or type(hello[1]) is not str:
                    violations.append(f"a connection sent {str(hello)[:80] or link.violation!r} instead of a greeting")
                conn.close()
    finally:
        for conn in pending:
            conn.close()


def describe(e: BaseException, path: str) -> str:
    """The failure as the test's own frames and the exception, without anything of the driver's."""
    try:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == path]
        text = "".join(traceback.format_list(frames[-3:]) + traceback.format_exception_only(type(e), e))
    except BaseException:  # noqa: BLE001 - a failure that cannot be described is still a failure
        text = type(e).__name__
    return text[-800:]


def run_test(link: SubjectLink, stems: list[str], code, path: str, name: str, limit_s: float) -> None:
    link.imported = False
    modules = link.wait_reply({})
    if type(modules) is not tuple or len(modules) != len(stems) or not all(type(m) is Remote for m in modules):
        raise PeerGone("the subject did not answer its import with the modules")
    link.imported = True
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    namespace = types.ModuleType(os.path.basename(path)[:-3])
    namespace.__file__ = path
    installed = {stem: RemoteModule(stem, m) for stem, m in zip(stems, modules, strict=True)}
    installed[namespace.__name__] = namespace
    sys.modules.update(installed)
    try:
        exec(code, namespace.__dict__)
        namespace.__dict__[name]()
    finally:
        for key in installed:
            sys.modules.pop(key, None)


def run_one(link: SubjectLink, stems: list[str], code, path: str, name: str, config: dict) -> tuple[bool, str]:
    """Import the module in the subject (`import_s`), then run the test (`per_test_s`); (passed, why not)."""
    try:
        signal.setitimer(signal.ITIMER_REAL, config["import_s"])
        try:
            run_test(link, stems, code, path, name, config["per_test_s"])
            return True, ""
        except BaseException as e:  # noqa: BLE001 - whatever the test raised, it failed
            if isinstance(e, TestTimeout):
                raise
            text = describe(e, path)
            return False, text if link.imported else f"the module under test did not import:\n{text}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except TestTimeout:
        if link.imported:
            return False, f"timed out after {config['per_test_s']:g}s"
        return False, f"the module under test did not import within {config['import_s']:g}s"


def main() -> None:
    inbox = Inbox()
    config = inbox.configuration()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    verdicts = os.fdopen(os.dup(1), "w", buffering=1)

    def emit(line: dict) -> None:
        verdicts.write(json.dumps(line) + "\n")
    os.dup2(2, 1)  # whatever a test prints goes to stderr: stdout carries verdicts only
    sys.stdout = sys.stderr
    signal.signal(signal.SIGALRM, _alarm)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(config["socket"])
    os.chmod(config["socket"], 0o666)  # the sandbox's own uid connects
    listener.listen(16)
    stems = [f[:-3] for f in config["files"]]
    codes = {}
    for file in {file for file, _ in config["tests"]}:
        path = os.path.abspath(os.path.join("tests", file))
        with open(path, encoding="utf-8") as f:
            codes[file] = (compile(f.read(), path, "exec"), path)
    unimportable, launch = None, 0
    for index, (file, name) in enumerate(config["tests"]):
        if unimportable is not None:
            emit({"test": index, "passed": False, "error": unimportable, "tampered": [], "seconds": 0.0})
            continue
        started, violations = time.monotonic(), []
        for _ in range(LAUNCHES):
            launch, token = launch + 1, secrets.token_hex(16)
            emit({"run": launch, "token": token})
            link = accept(listener, inbox, launch, token, config["connect_s"], violations)
            if not isinstance(link, str):
                break
        if isinstance(link, str):
            passed, error = False, link
        else:
            passed, error = run_one(link, stems, *codes[file], name, config)
            link.sock.close()
            violations += [link.violation] if link.violation else []
            if link.imported is False:
                unimportable = "not run: the module under test did not import (see the first failure)"
        emit({"test": index, "passed": passed, "error": error, "tampered": violations[:1],
              "seconds": round(time.monotonic() - started, 3)})
    emit({"done": True})


if __name__ == "__main__":
    main()
