"""Admission of every bundled Code-v0 task, graded for real in the sandbox: reference → 1, stub → 0; what the
grader keeps of in-process semantics; and the task format's load-time errors."""

import asyncio
from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest

from polar.envs.code import CodeFamily
from polar.envs.registration import register_envs
from polar.envs.sandbox import make_backend
from polar.errors import SandboxError, TaskFormatError
from polar.evaluation.admission import admit_suite
from polar.evaluation.runner import run_episode
from polar.policies import OraclePolicy
from polar.tasks.code import load_suite

TASKS = load_suite()
BY_ID = {t.id: t for t in TASKS}


def test_the_suite_has_40_tasks_of_graded_difficulty():
    counts = Counter(t.difficulty for t in TASKS)
    assert len(TASKS) >= 40 and all(counts[d] >= 10 for d in ("easy", "medium", "hard")), counts


@pytest.mark.slow  # a sweep over every bundled task: the fast subset runs one episode of each family
def test_admission_the_reference_scores_1_and_the_untouched_stub_0(bwrap):
    env_id, admissions = asyncio.run(admit_suite("code", sandbox="local", jobs=4))
    assert env_id == "polar/Code-v0" and len(admissions) == len(TASKS)
    assert [(a.task_id, a.reasons) for a in admissions if not a.admitted] == []


def test_the_oracle_solves_a_task_of_each_difficulty_through_the_env(bwrap):
    """Through gym.make and the built-in harness, the task with the longest reference at each level (admission above
    grades every task's reference; running all 40 through the env too took 80 s of CI and tests no other code)."""
    register_envs()
    wanted = [max((t for t in TASKS if t.difficulty == d), key=lambda t: len(str(t.solution))).id
              for d in ("easy", "medium", "hard")]
    env = gym.make("polar/Code-v0", sandbox="local")
    try:
        rewards = {tid: run_episode(env, OraclePolicy(), seed=0, task_id=tid).reward for tid in wanted}
    finally:
        env.close()
    assert rewards == dict.fromkeys(wanted, 1.0)


def grade(task_id: str, files: dict[str, str]):
    return asyncio.run(CodeFamily().grade_files(BY_ID[task_id], files, make_backend("local")))


def test_a_call_that_changes_its_argument_in_place_is_seen_by_the_test(bwrap):
    """Arguments travel by value, and the call's in-place changes travel back: sorting the caller's list fails
    the test that checks the input is left alone, as it would in-process."""
    solution = BY_ID["merge_intervals"].solution["intervals.py"]
    sorts_its_input = solution.replace("    merged: list[Interval] = []\n", "    intervals.sort()\n    merged = []\n")
    result = grade("merge_intervals", {"intervals.py": sorts_its_input})
    assert result.components["solved"] == 0.0 and result.error is None, result.log
    assert "FAILED test_intervals.py::test_merge_does_not_modify_input" in result.log, result.log
    assert result.log.count("FAILED") == 1, result.log


def test_what_the_module_raises_and_returns_keeps_its_meaning_for_the_test(bwrap):
    """Builtin exceptions by name, the module's exceptions as mirror classes with their builtin bases, a str
    subclass compared as a str, identity of a returned argument, iterators lent in both directions."""
    module = """
class ParseError(ValueError):
    def __init__(self, pos):
        super().__init__(f"at {pos}")
        self.pos = pos

class Word(str):
    def shout(self):
        return self.upper() + "!"

def parse(text, data=None):
    if text == "bad":
        raise ParseError(3)
    if text == "key":
        raise KeyError(text)
    if text == "same":
        return data
    return Word(text)

def pull(iterable, n):
    it = iter(iterable)
    return [next(it) for _ in range(n)]

def count_up():
    n = 0
    while True:
        yield n
        n += 1
"""
    tests = """
import itertools
from m import ParseError, Word, count_up, parse, pull

def test_exceptions():
    try:
        parse("bad")
    except ValueError as exc:
        assert isinstance(exc, ParseError) and exc.pos == 3 and str(exc) == "at 3"
    else:
        raise AssertionError("no ParseError")
    assert issubclass(ParseError, ValueError)
    try:
        parse("key")
    except KeyError as exc:
        assert exc.args == ("key",)
    else:
        raise AssertionError("no KeyError")

def test_values():
    word = parse("hi")
    assert word == "hi" and isinstance(word, str) and isinstance(word, Word) and word.shout() == "HI!"
    data = {"a": [1, 2]}
    assert parse("same", data) is data

def test_iterators():
    source = iter(range(10))
    assert pull(source, 3) == [0, 1, 2] and next(source) == 3
    assert list(itertools.islice(count_up(), 4)) == [0, 1, 2, 3]
    assert pull(itertools.count(5), 2) == [5, 6]
"""
    task = BY_ID["run_length_encoding"]
    task = type(task)(id="t", title="t", difficulty="easy", statement="", stub={"m.py": ""}, solution={"m.py": ""},
                      tests={"test_m.py": tests})
    result = asyncio.run(CodeFamily().grade_files(task, {"m.py": module}, make_backend("local")))
    assert result.error is None and result.components["solved"] == 1.0, result.log


def test_grading_refuses_the_unisolated_process_sandbox():
    with pytest.raises(SandboxError, match="process"):
        asyncio.run(CodeFamily().grade_files(BY_ID["caesar_cipher"], BY_ID["caesar_cipher"].solution,
                                             make_backend("process")))


def write_task(root: Path, files: str = '["m.py"]', test: bytes = b"def test_a():\n    assert True\n") -> Path:
    task = root / "t1"
    for sub in ("stub", "solution", "tests"):
        (task / sub).mkdir(parents=True)
        if sub != "tests":
            (task / sub / "m.py").write_text("x = 1\n")
    (task / "task.toml").write_text(f'id = "t1"\ntitle = "t"\ndifficulty = "easy"\nfiles = {files}\n')
    (task / "statement.md").write_text("Do it.\n")
    (task / "tests" / "test_m.py").write_bytes(test)
    return task


def test_a_well_formed_user_task_loads(tmp_path):
    write_task(tmp_path)
    assert [t.files for t in load_suite(str(tmp_path))] == [["m.py"]]


@pytest.mark.parametrize("files", ['[".."]', '["../m.py"]', '["pkg/m.py"]', '["m"]', '["m.txt"]', '["my mod.py"]',
                                   '["1m.py"]', '[""]', '["m.py", "m.py"]', "[]", "[1]"])
def test_a_module_file_that_is_not_a_plain_py_name_fails_at_load(tmp_path, files):
    write_task(tmp_path, files=files)
    with pytest.raises(TaskFormatError, match=r"t1/task.toml: field 'files'"):
        load_suite(str(tmp_path))


def test_a_test_file_that_is_not_utf8_fails_at_load_naming_it(tmp_path):
    write_task(tmp_path, test=b"def test_a():\n    assert '\xe9' == '\xe9'\n")
    with pytest.raises(TaskFormatError, match=r"t1/tests/test_m.py: not UTF-8"):
        load_suite(str(tmp_path))


@pytest.mark.parametrize("source", [b"def test_a(:\n    pass\n", b"def test_a():\n    return 1\x00\n"])
def test_a_test_file_that_does_not_parse_fails_at_load_naming_it(tmp_path, source):
    write_task(tmp_path, test=source)
    with pytest.raises(TaskFormatError, match=r"t1/tests/test_m.py: .*fix the test file"):
        load_suite(str(tmp_path))


def test_a_task_s_test_timeout_fails_a_module_that_loops_forever_in_seconds(bwrap, tmp_path):
    """task.toml's `test_timeout_s` bounds each test (the warm-up suite sets 5 s): a module whose function never
    returns fails every test on that clock, while the reference still passes."""
    import re

    from polar.envs.code.family import PER_TEST_S

    (task,) = load_suite(str(write_task(tmp_path).parent))
    tests = {"test_m.py": "from m import f\n\ndef test_a():\n    assert f() == 1\n\n"
                          "def test_b():\n    assert f() == 1\n"}
    task = type(task)(**{**task.__dict__, "tests": tests, "test_timeout_s": 1.5})
    looping = asyncio.run(CodeFamily().grade_files(task, {"m.py": "def f():\n    while True:\n        pass\n"},
                                                   make_backend("local")))
    assert looping.components["solved"] == 0.0 and looping.log.startswith("passed 0/2"), looping.log
    # each test ended on the task's clock (the driver logs its seconds), not on the family's default
    seconds = [float(s) for s in re.findall(r"^FAILED test_m\.py::test_\w+ \(([\d.]+)s\)", looping.log, re.M)]
    assert len(seconds) == 2 and max(seconds) < PER_TEST_S / 2, looping.log
    fine = asyncio.run(CodeFamily().grade_files(task, {"m.py": "def f():\n    return 1\n"}, make_backend("local")))
    assert fine.components["solved"] == 1.0, fine.log


@pytest.mark.parametrize("value", ["0", "-1", '"5"', "true", "7200"])
def test_a_test_timeout_that_is_not_a_number_of_seconds_fails_at_load(tmp_path, value):
    task = write_task(tmp_path)
    with (task / "task.toml").open("a") as f:
        f.write(f"test_timeout_s = {value}\n")
    with pytest.raises(TaskFormatError, match=r"t1/task.toml: field 'test_timeout_s'"):
        load_suite(str(tmp_path))
