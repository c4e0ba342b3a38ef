"""polar's verdict recorder, loaded with `-p polar_verdict` from outside the
repository before any of its code. It records each test's outcome by node id, and the tests in which an equality
check passed on a value that also equals what it cannot be (an `__eq__` that says yes to anything), and writes both
to /tmp/polar_grader/verdict.json when the session ends: no file means pytest never finished.

It runs in the repository's own interpreter, which may be older than polar's: no `zip(strict=)` and the like."""
# ruff: noqa: UP031, B905
import json
import os
import sys
import unittest

__unittest = True  # unittest leaves this module's frames out of its failure reports
OUTCOMES, FORGED, CURRENT, PRISTINE = {}, {}, [None], set()
_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_CONTAINERS = (tuple, list, dict, set, frozenset)


class _Unrelated:
    """Equal to nothing but itself."""


def _other_than(value):
    """A value of `value`'s builtin type that is not equal to it."""
    if type(value) is bool:
        return not value
    return value + ("\\0" if type(value) is str else b"\\0" if type(value) is bytes else 1)


def _forged(a, b, depth=0):
    """Why `a == b` is not to be believed: a side that is no builtin value, nor made by the tests' own modules,
    also equals what it is not."""
    for value, other in ((a, b), (b, a)):
        module = sys.modules.get(type(value).__module__)
        if type(value) in _SCALARS or type(value) in _CONTAINERS or getattr(module, "__file__", None) in PRISTINE:
            continue
        try:
            if value == _Unrelated() or type(other) in _SCALARS[:-1] and value == _other_than(other):
                return "a %s that equals values it is not" % type(value).__qualname__
        except Exception:
            pass
    if depth < 3 and type(a) in (list, tuple) and type(b) in (list, tuple) and len(a) == len(b) < 10000:
        pairs = zip(a, b)
    elif depth < 3 and type(a) is dict and type(b) is dict:
        pairs = ((a[k], b[k]) for k in a if k in b)
    else:
        return None
    for x, y in pairs:
        found = _forged(x, y, depth + 1)
        if found:
            return found
    return None


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


def pytest_load_initial_conftests(early_config):
    # the repository imports as it would under `python -m pytest` in /testbed, but only once pytest and this
    # plugin are loaded (PYTHONSAFEPATH keeps the working directory off sys.path at start-up)
    if "/testbed" not in sys.path:
        sys.path.insert(0, "/testbed")
    for name in ("assertEqual", "assertListEqual", "assertTupleEqual", "assertDictEqual", "assertSequenceEqual"):
        setattr(unittest.TestCase, name, _checked(getattr(unittest.TestCase, name)))


def pytest_collection_modifyitems(session, config, items):
    PRISTINE.update(str(item.fspath) for item in items)
    PRISTINE.update(getattr(p, "__file__", None) for p in config.pluginmanager.get_plugins())


def pytest_runtest_logstart(nodeid, location):
    CURRENT[0] = nodeid


def pytest_assertion_pass(item, lineno, orig, expl):
    """Implemented so that pytest explains passing assertions too, which hands their comparisons to the next hook."""


def pytest_assertrepr_compare(config, op, left, right):
    if op == "==":
        _check(left, right)


def pytest_runtest_logreport(report):
    xfail = hasattr(report, "wasxfail")
    if report.failed:
        status = "FAILED" if report.when == "call" else "ERROR"
    elif report.skipped:
        status = "XFAIL" if xfail else "SKIPPED"
    elif report.when == "call":
        status = "XPASS" if xfail else "PASSED"
    else:
        return
    if OUTCOMES.get(report.nodeid) != "ERROR":
        OUTCOMES[report.nodeid] = status


def pytest_sessionfinish(session, exitstatus):
    with open("/tmp/polar_grader/verdict.json.part", "w") as f:
        json.dump({"outcomes": OUTCOMES, "forged": FORGED}, f)
    os.replace("/tmp/polar_grader/verdict.json.part", "/tmp/polar_grader/verdict.json")
