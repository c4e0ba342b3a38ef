"""Canary tests: tests with fresh random names whose outcomes polar knows, written into the graded test files at
grade time, so a test framework that the code under test subverted shows itself whatever the mechanism.

Code under test runs inside pytest's process and can change how pytest or unittest runs a test or reports it
(wrap `runtest`, swallow exceptions, clear unittest's failure list, add a hook). Whatever it changes applies to the
canaries too, unless it can tell them from the repository's own new tests: their names are made of the words of
the test patch itself, they sit between the file's own tests at random places, and what tells polar which tests are
canaries is deleted before pytest starts (`canary_placer.py`). A canary that must fail and passed (or xfailed) is
tampering. The canaries that must pass show that the canaries ran at all (a file pytest skipped whole proves nothing).

The graded tests themselves run under fresh names of the same kind (`CanarySet.renamed`; polar maps their outcomes
back), and their mirrors expect values near the real ones: code that acts on the test called `test_count`, or on the
one whose expected value looks plausible, finds neither.
"""

from __future__ import annotations

import json
import keyword
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

PLACER_SOURCE = Path(__file__).with_name("canary_placer.py").read_text()
_WORDS = ("value", "result", "items", "empty", "default", "order", "nested", "single", "multiple", "keys",
          "format", "parse", "merge", "update", "basic", "simple", "large", "small", "missing", "extra", "none",
          "types", "mixed", "unicode", "strings", "numbers", "first", "last", "length", "repeat", "invalid", "output")
MIRRORS_PER_FILE = 8
"""Names for mirrors per file: up to six of the first graded test (`canary_placer.MOST_OF_THE_FIRST`), then one each."""
_PASSED = ("PASSED", "XPASS")
V = TypeVar("V")


@dataclass(frozen=True)
class Canary:
    node_id: str
    must_pass: bool


@dataclass(frozen=True)
class CanarySet:
    """What the placer writes (test file -> code blocks) and what polar expects of each canary's node id."""

    blocks: dict[str, list[str]]
    canaries: tuple[Canary, ...]
    mirrors: tuple[Canary, ...] = ()
    """Must-fail copies of the files' own tests the placer may make (`canary_placer.mirrors`): a name polar chose
    that no test of that shape backs never runs, and proves nothing."""
    first: dict[str, list[str]] = field(default_factory=dict)
    """Per file, the graded tests' functions, mirrored before the file's other tests."""
    renamed: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per file, each graded top-level test function's fresh name; the placer renames it where the file names it
    once (its `def`), and the test then runs under that name."""

    def placer_data(self) -> str:
        mirrors: dict[str, list[str]] = {}
        for mirror in self.mirrors:
            path, name = mirror.node_id.split("::")
            mirrors.setdefault(path, []).append(name)
        return json.dumps({"blocks": self.blocks, "mirrors": mirrors, "first": self.first, "renamed": self.renamed})

    def _back(self, placed: dict[str, str]) -> dict[str, str]:
        """Fresh node id -> the graded test's own, for each test the placer renamed (its fresh name is defined in the
        file as polar read it back before the run)."""
        return {f"{path}::{new}": f"{path}::{old}" for path, names in self.renamed.items()
                for old, new in names.items() if re.search(rf"\bdef {re.escape(new)}\(", placed.get(path, ""))}

    def stale(self, results: dict[str, object], placed: dict[str, str]) -> list[str]:
        """Node ids in `results` under the own name of a test that ran under its fresh one: pytest never reported
        them; the code under test did."""
        renamed = set(self._back(placed).values())
        return [node_id for node_id in results if node_id.partition("[")[0] in renamed]

    def restore(self, results: dict[str, V], placed: dict[str, str]) -> dict[str, V]:
        """`results` (by node id) under the graded tests' own names again: each test the placer renamed ran under its
        fresh name (`stale` names what claims the old one)."""
        back = self._back(placed)
        if not back:
            return results
        restored = {}
        for node_id, value in results.items():
            base, bracket, params = node_id.partition("[")
            restored[back.get(base, base) + bracket + params] = value
        return restored

    def check(self, outcomes: dict[str, str], placed: dict[str, str] | None = None) -> tuple[str | None, str]:
        """(why the record shows a subverted framework, or None; a line for the log) from the recorded outcomes.

        `placed` is each test file as the placer left it (polar read it back before pytest started): in a file
        whose own tests ran, every canary, and every mirror the placer wrote there, must have an outcome, and a
        canary that must pass must not have failed. A file with no outcome at all (it did not collect: an honest
        broken patch) proves nothing either way."""
        plain = {c.node_id.split("::")[0] for c in self.canaries if c.must_pass and outcomes.get(c.node_id) == "PASSED"}

        def wrong(c: Canary) -> bool:  # an XFAIL only where the file's passing canaries passed plainly (no xfail mark)
            outcome = outcomes.get(c.node_id)
            return outcome in _PASSED or (outcome == "XFAIL" and c.node_id.split("::")[0] in plain)

        passed = [c.node_id for c in (*self.canaries, *self.mirrors) if not c.must_pass and wrong(c)]
        ran = sum(outcomes.get(c.node_id) in _PASSED for c in self.canaries if c.must_pass)
        mirrored = sum(c.node_id in outcomes for c in self.mirrors)
        fresh = len(self.restore({n: n for n in outcomes}, placed or {}).keys() - outcomes.keys())
        line = (f">>>>> polar canaries: {len(self.canaries)} in {len(self.blocks)} file(s), {mirrored} mirror(s) of "
                f"the files' own tests, {fresh} graded test outcome(s) under fresh names; {ran} of "
                f"{sum(c.must_pass for c in self.canaries)} that must pass passed\n")
        if passed:
            return (f"{len(passed)} canary test(s) that must fail passed or xfailed: something in the repository "
                    f"changed how the test framework runs or reports tests"), line
        if placed is not None:
            ours = {c.node_id for c in (*self.canaries, *self.mirrors)}
            files = {n.split("::")[0] for n in outcomes if n not in ours}
            def written(c: Canary) -> bool:  # the placer wrote it (a mirror needs a test of its shape)
                name = c.node_id.split("::")[-1].split("[")[0]
                return re.search(rf"\bdef {re.escape(name)}\(", placed.get(c.node_id.split("::")[0], "")) is not None

            expected = [c for c in (*self.canaries, *self.mirrors) if written(c)]
            missing = [c.node_id for c in expected if c.node_id.split("::")[0] in files and c.node_id not in outcomes]
            failed = [c.node_id for c in self.canaries if c.must_pass and c.node_id.split("::")[0] in files
                      and outcomes.get(c.node_id) == "FAILED"]
            if missing or failed:
                return (f"{len(missing)} canary test(s) polar placed in a test file whose own tests ran have no "
                        f"outcome, and {len(failed)} that must pass failed: something in the repository changed the "
                        f"tests pytest ran ({', '.join((missing + failed)[:3])})"), line
        return None, line


class _Names:
    """Names made of the test patch's own words, absent from every text they could clash with."""

    def __init__(self, rng: random.Random, taken: str) -> None:
        words = {w.lower() for w in re.findall(r"[A-Za-z][a-z]{2,9}", taken)} - set(keyword.kwlist)
        self.words = sorted(words | set(_WORDS))
        self.rng, self.taken, self.used = rng, taken, set()

    def _fresh(self, make) -> str:
        while True:
            name = make(self.rng.sample(self.words, self.rng.choice((2, 3))))
            if name not in self.used and name not in self.taken:
                self.used.add(name)
                return name

    def function(self) -> str:
        return self._fresh(lambda words: "test_" + "_".join(words))

    def cls(self, suffix: str = "") -> str:
        return self._fresh(lambda words: ("Test" if not suffix else "") + "".join(w.title() for w in words) + suffix)

    def plain(self) -> str:
        return self._fresh(lambda words: "_".join(words))


def _failing_body(rng: random.Random, pytest_alias: str, indent: str) -> str:
    a, b = rng.randrange(2, 999), rng.randrange(2, 999)
    key = rng.choice(("name", "size", "mode", "kind"))
    return indent + rng.choice((
        f"assert {a} + {b} == {a + b + rng.randrange(1, 9)}",
        f"raise ValueError({f'unexpected {key}'!r})",
        f"assert sorted([{b}, {a}, {a + b}]) == [{a + b}, {a}, {b}]",
        f"{pytest_alias}.fail({f'wrong {key}'!r})",
        f"assert {{}}[{key!r}] == {a}",
        f"assert int({str(a) + 'x'!r}) == {a}",
    ))


def _passing_body(rng: random.Random, indent: str) -> str:
    a, b = rng.randrange(2, 999), rng.randrange(2, 999)
    return indent + rng.choice((f"assert {a} + {b} == {a + b}", f"assert sorted([{b}, {a}]) == {sorted([a, b])}",
                                f"assert len({'x' * (a % 7 + 1)!r}) == {a % 7 + 1}"))


def _file_canaries(path: str, names: _Names, rng: random.Random) -> tuple[list[str], list[Canary]]:
    """One block of each shape (plain function, class, parametrized, unittest.TestCase), with canaries that must
    fail and canaries that must pass in random order."""
    pytest_alias, unittest_alias = names.plain(), names.plain()
    blocks, canaries = [], []  # each block imports what its definitions need, wherever it lands

    for must_pass in rng.sample((True, False), 2):
        name = names.function()
        body = _passing_body(rng, "    ") if must_pass else _failing_body(rng, pytest_alias, "    ")
        blocks.append(f"def {name}():\n{body}\n")
        canaries.append(Canary(f"{path}::{name}", must_pass))

    cls, methods = names.cls(), []
    for must_pass in rng.sample((True, False), 2):
        name = names.function()
        body = _passing_body(rng, "        ") if must_pass else _failing_body(rng, pytest_alias, "        ")
        methods.append(f"    def {name}(self):\n{body}\n")
        canaries.append(Canary(f"{path}::{cls}::{name}", must_pass))
    blocks.append(f"class {cls}:\n" + "\n".join(methods))

    name, argument, good = names.function(), names.plain(), rng.randrange(10, 99)
    bad = good + rng.randrange(1, 9)
    values = rng.sample((good, bad), 2)
    blocks.append(f"import pytest as {pytest_alias}\n\n\n@{pytest_alias}.mark.parametrize({argument!r}, {values})\n"
                  f"def {name}({argument}):\n    assert {argument} == {good}\n")
    canaries += [Canary(f"{path}::{name}[{v}]", v == good) for v in values]

    case, methods = names.cls(rng.choice(("Tests", "TestCase", "Test"))), []
    for must_pass in rng.sample((True, False), 2):
        name, a = names.function(), rng.randrange(2, 999)
        body = (f"self.assertEqual({a} * 2, {a * 2})" if must_pass else
                rng.choice((f"self.assertEqual({a} * 2, {a * 2 + 1})", "self.fail('unexpected result')",
                            f"self.assertTrue({a} < 0)", f"self.assertIn({a}, [{a + 1}])")))
        methods.append(f"    def {name}(self):\n        {body}\n")
        canaries.append(Canary(f"{path}::{case}::{name}", must_pass))
    blocks.append(f"import unittest as {unittest_alias}\n\n\nclass {case}({unittest_alias}.TestCase):\n"
                  + "\n".join(methods))
    return blocks, canaries


def make_canaries(test_files: dict[str, str], test_patch: str, rng: random.Random | None = None,
                  graded: Sequence[str] = ()) -> CanarySet:
    """Canaries for each Python test file (path -> its text in the grading sandbox before the test patch), with
    names found in none of those texts nor in the test patch; mirrors of the `graded` tests (pytest node ids) first."""
    rng = rng or random.SystemRandom()
    names = _Names(rng, test_patch + "\n".join(test_files.values()))
    blocks, canaries, mirrors = {}, [], []
    for path in sorted(test_files):
        blocks[path], found = _file_canaries(path, names, rng)
        canaries += found
        mirrors += [Canary(f"{path}::{names.function()}", False) for _ in range(MIRRORS_PER_FILE)]
    first: dict[str, list[str]] = {}
    renamed: dict[str, dict[str, str]] = {}
    for node_id in graded:
        path, _, name = node_id.partition("::")
        name = name.split("[")[0]
        if path in test_files and name.isidentifier() and name not in renamed.get(path, {}):
            first.setdefault(path, []).append(name)
            renamed.setdefault(path, {})[name] = names.function()
    return CanarySet(blocks, tuple(canaries), tuple(mirrors), first, renamed)
