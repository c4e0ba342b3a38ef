"""polar's verdict recorder, loaded with `-p polar_verdict` from outside the
repository before any of its code. It records each test's outcome by node id, and the tests in which an equality
check passed on a value that also equals what it cannot be (an `__eq__` that says yes to anything).

Nothing it records is left in the sandbox: each outcome leaves the process as it is decided, one JSON line on the
descriptor polar's eval command hands it (named by POLAR_RECORD_FD, both taken away on import so that neither the
tests nor the programs they start inherit them), which is the command's own output, read by polar as it arrives; the
session's end sends the rest and an `end` line. polar ignores every file in the sandbox for the verdict: no `end`
means pytest never finished, and anything after it was written by code that outlived the session.

It runs in the repository's own interpreter, which may be older than polar's: no `zip(strict=)` and the like."""
# ruff: noqa: UP031, B905
import json
import os
import sys
import unittest

__unittest = True  # unittest leaves this module's frames out of its failure reports


def _channel():
    """polar's end of the record, moved to a descriptor no child inherits; the variable naming it goes too. A process
    started without it (an xdist worker) records nothing: its outcomes reach polar through the main process."""
    number = os.environ.pop("POLAR_RECORD_FD", None)
    if number is None:
        return None
    try:
        fd = os.dup(int(number))  # not inheritable
        os.close(int(number))
    except (OSError, ValueError):
        return None
    return fd


CHANNEL = _channel()


def _send(*record):
    data = (json.dumps(record) + "\n").encode()
    while CHANNEL is not None and data:
        data = data[os.write(CHANNEL, data):]


OUTCOMES, FORGED, CURRENT, PRISTINE, SUBFAILED = {}, {}, [None], set(), {}
_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_CONTAINERS = (tuple, list, dict, set, frozenset)


class _Unrelated:
    """Equal to nothing but itself."""


def _other_than(value):
    """A value of `value`'s builtin type that is not equal to it."""
    if type(value) is bool:
        return not value
    return value + ("\\0" if type(value) is str else b"\\0" if type(value) is bytes else 1)


_OWN = {}


def _own(code):
    """Whether `code` is code the tests' own file compiles to (not a code object that only claims its file's name)."""
    path = code.co_filename if type(code) is type(_own.__code__) else None
    if path in PRISTINE and path not in _OWN:
        _OWN[path], stack = set(), []
        try:
            with open(path, "rb") as f:
                stack.append(compile(f.read(), path, "exec", dont_inherit=True))
        except Exception:
            pass
        while stack:
            found = stack.pop()
            _OWN[path].add((found.co_name, found.co_firstlineno, found.co_code))
            stack.extend(c for c in found.co_consts if type(c) is type(found))
    return path in _OWN and (code.co_name, code.co_firstlineno, code.co_code) in _OWN[path]


def _forged(a, b, depth=0):
    """Why `a == b` is not to be believed: a side that is no builtin value, nor one whose `__eq__` is code of the
    tests' own files, also equals what it is not, or is a builtin type's value whose `==` is not that type's."""
    for value, other in ((a, b), (b, a)):
        if type(value) in _SCALARS or type(value) in _CONTAINERS or _own(getattr(type(value).__eq__, "__code__", 0)):
            continue
        base = next((t for t in type(value).__mro__ if t in _SCALARS), None)  # not containers: Counter's 0 counts
        try:
            if value == _Unrelated() or type(other) in _SCALARS[:-1] and value == _other_than(other):
                return "a %s that equals values it is not" % type(value).__qualname__
            if base is not None and base.__eq__(value, other) is False:
                return "a %s whose == says yes where its %s value does not" % (type(value).__qualname__, base.__name__)
        except Exception:
            pass
    if depth < 3 and type(a) in (list, tuple) and type(b) in (list, tuple) and len(a) == len(b) < 10000:
        pairs = zip(a, b)
    elif depth < 3 and type(a) is dict and type(b) is dict:
        pairs = ((a[k], b[k]) for k in a if k in b)
    else:
        return None
    return next((found for found in (_forged(x, y, depth + 1) for x, y in pairs) if found), None)


def _check(a, b):
    try:
        equal = bool(a == b)
    except Exception:
        return
    found = equal and _forged(a, b)
    if found and CURRENT[0]:
        FORGED.setdefault(CURRENT[0], found)


def _checked(method):
    def check(self, first, second, *args, **kwargs):
        method(self, first, second, *args, **kwargs)
        _check(first, second)
    return check


for _name in ("assertEqual", "assertListEqual", "assertTupleEqual", "assertDictEqual", "assertSequenceEqual"):
    setattr(unittest.TestCase, _name, _checked(getattr(unittest.TestCase, _name)))


def pytest_load_initial_conftests(early_config):
    # the repository imports as it would under `python -m pytest` in /testbed, but only once pytest and this
    # plugin are loaded (PYTHONSAFEPATH keeps the working directory off sys.path at start-up)
    if "/testbed" not in sys.path:
        sys.path.insert(0, "/testbed")
    # the programs the tests start (`python -m package` in /testbed) find the repository as they would without
    # polar: PYTHONSAFEPATH guards this process's start-up only, and a child's verdict is not read
    os.environ.pop("PYTHONSAFEPATH", None)


def pytest_collection_modifyitems(session, config, items):
    PRISTINE.update(str(item.fspath) for item in items)
    PRISTINE.update(f for f in (getattr(p, "__file__", None) for p in config.pluginmanager.get_plugins()) if f)


def pytest_runtest_logstart(nodeid, location):
    CURRENT[0] = nodeid


def pytest_assertion_pass(item, lineno, orig, expl):
    """Implemented so that pytest explains passing assertions too, which hands their comparisons to the next hook."""


def pytest_assertrepr_compare(config, op, left, right):
    if op == "==":
        _check(left, right)


def pytest_runtest_logreport(report):
    xfail = hasattr(report, "wasxfail")
    if report.outcome == "rerun":  # pytest-rerunfailures: an attempt before the last, which decides
        return
    if type(report).__name__ in ("SubtestReport", "SubTestReport"):  # pytest >= 9, pytest-subtests: one per subtest
        if report.failed and OUTCOMES.get(report.nodeid) not in ("ERROR", "FAILED"):
            SUBFAILED[report.nodeid] = "a subtest failed"  # the test failed, whatever its own report says
            OUTCOMES[report.nodeid] = "FAILED"
            _send("test", report.nodeid, "FAILED")
        return
    if report.failed:
        status = "FAILED" if report.when == "call" else "ERROR"
    elif report.skipped:
        status = "XFAIL" if xfail else "SKIPPED"
    elif report.when == "call":
        status = "XPASS" if xfail else "PASSED"
    else:
        return
    if OUTCOMES.get(report.nodeid) != "ERROR" and (report.nodeid not in SUBFAILED or status == "ERROR"):
        OUTCOMES[report.nodeid] = status
        _send("test", report.nodeid, status)


def pytest_sessionfinish(session, exitstatus):
    _send("end", {"forged": FORGED, "subfailed": SUBFAILED})
