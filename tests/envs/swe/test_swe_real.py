"""SWE-v0 on real history: the bundled swe-real-mini suite (bug fixes between consecutive PyPI releases) admits and
the oracle resolves it in both sandboxes, and `--repos` builds an instance's repository from a local git mirror or
bundle, checked out at a real commit, with nothing of the later history left in it."""

import asyncio
import io
import json
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import pytest

from polar.envs.registration import register_envs
from polar.envs.sandbox import make_backend
from polar.envs.swe.environment import (
    GIT,
    REPOS_VARIABLE,
    TEST_FILES,
    load_environments,
    mirror_of,
    repository_environment,
)
from polar.envs.swe.family import SweFamily
from polar.errors import TaskFormatError
from polar.evaluation.admission import admit_suite
from polar.evaluation.runner import run_episode
from polar.policies import OraclePolicy
from polar.tasks.swe import BUNDLED, diff_blocks, load_instances, patch_files

register_envs()
SUITE = "swe-real-mini"
TASKS = load_instances(SUITE)
CACHETOOLS = next(t for t in TASKS if t.repo == "tkem/cachetools")
SDISTS = BUNDLED / "sdists"
COMMIT_ENV = {"GIT_AUTHOR_NAME": "Thomas Kemmer", "GIT_AUTHOR_EMAIL": "tkemmer@example.invalid",
              "GIT_COMMITTER_NAME": "Thomas Kemmer", "GIT_COMMITTER_EMAIL": "tkemmer@example.invalid"}


def run(coro):
    return asyncio.run(coro)


def git(cwd: Path, *argv: str, date: str = "2021-01-24T20:35:01+0000") -> str:
    env = {**COMMIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "PATH": "/usr/bin:/bin"}
    return subprocess.run([*GIT, *argv], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip()


def release_tree(sdist: Path, into: Path) -> None:
    """Replace everything but .git in `into` with the sdist's tree."""
    for child in into.iterdir():
        if child.name != ".git":
            subprocess.run(["rm", "-rf", str(child)], check=True)
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            member.name = member.name.partition("/")[2]
            if member.name:
                tar.extract(member, into, filter="data")


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> tuple[Path, str, str]:
    """A repository of cachetools made from its 4.2.0 and 4.2.1 sdists, one commit per release, as a bare mirror
    and as a bundle in a repos folder: (folder, the 4.2.0 commit, the 4.2.1 commit)."""
    root = tmp_path_factory.mktemp("history")
    work = root / "work"
    work.mkdir()
    git(work, "init", "-q")
    commits = []
    for version, date in (("4.2.0", "2020-12-10T20:24:59+0000"), ("4.2.1", "2021-01-24T20:35:01+0000")):
        release_tree(SDISTS / f"cachetools-{version}.tar.gz", work)
        git(work, "add", "-A", "--force")
        git(work, "commit", "-q", "--no-verify", "-m", f"cachetools {version}", date=date)
        git(work, "tag", f"v{version}")
        commits.append(git(work, "rev-parse", "HEAD"))
    repos = root / "repos"
    repos.mkdir()
    git(root, "clone", "-q", "--bare", str(work), str(repos / "tkem__cachetools.git"))
    git(work, "bundle", "create", str(root / "tkem__cachetools.bundle"), "--all")
    return repos, commits[0], commits[1]


NEW_TEST = """from cachetools import LRUCache


class DefaultCache(LRUCache):
    def __missing__(self, key):
        try:
            self[key] = key
        except ValueError:
            pass  # too big: not stored
        return key


def test_a_missing_key_that_is_stored():
    cache = DefaultCache(maxsize=2, getsizeof=lambda x: x)
    assert cache[1] == 1 and 1 in cache


def test_a_missing_key_that_is_not_stored():
    cache = DefaultCache(maxsize=2, getsizeof=lambda x: x)
    assert cache[1] == 1 and cache[2] == 2 and 1 not in cache
    assert cache[3] == 3 and 3 not in cache
    assert cache[1] == 1 and cache.popitem() == (1, 1)  # before the fix, 3 was left in the order and popped
"""


def in_swe_bench_s_shape() -> dict:
    """The cachetools fix with a test patch in SWE-bench's shape: it adds the test file that FAIL_TO_PASS and
    PASS_TO_PASS name (SWE-bench's harness runs the test patch's files only; the real-mini row's patch changes
    tests/__init__.py, whose tests run from other files)."""
    lines = NEW_TEST.splitlines()
    patch = "".join(["diff --git a/tests/test_missing.py b/tests/test_missing.py\n", "new file mode 100644\n",
                     "--- /dev/null\n", "+++ b/tests/test_missing.py\n", f"@@ -0,0 +1,{len(lines)} @@\n",
                     *(f"+{line}\n" for line in lines)])
    return {"test_patch": patch, "FAIL_TO_PASS": ["tests/test_missing.py::test_a_missing_key_that_is_not_stored"],
            "PASS_TO_PASS": ["tests/test_missing.py::test_a_missing_key_that_is_stored"]}


def mirror_row(base_commit: str, **fields) -> dict:
    """The real-mini cachetools instance as a row of another dataset: its own id, SWE-bench's `version` style (no
    bundled environment has it), the real commit of the mirror, and what its tests need."""
    return {**CACHETOOLS.to_record(), "instance_id": "tkem__cachetools-4.2.1-mirror", "version": "4.2",
            "base_commit": base_commit, "eval_script": "", "environment_setup_commit": base_commit, **fields}


# --- the suite ---------------------------------------------------------------------------------------------

def test_each_instance_is_a_real_fix_between_two_releases_with_its_changelog_quoted():
    environments = load_environments()
    assert len(TASKS) >= 2 and len({t.repo for t in TASKS}) == len(TASKS)
    for task in TASKS:
        environment = environments[(task.repo, task.version)]
        assert environment.sdist_is_base and environment.licence == task.extra["licence"] == "MIT"
        later = SDISTS / f"{task.extra['history']['fix'].replace(' ', '-')}.tar.gz"
        with tarfile.open(later) as tar:
            files = {m.name.partition("/")[2]: m for m in tar.getmembers()}

            def text(path: str, tar=tar, files=files) -> str:
                return tar.extractfile(files[path]).read().decode()

            quote = next(line[2:] for line in task.problem_statement.splitlines() if line.startswith("> "))
            assert quote in text(task.extra["history"]["changelog"])
            for block in diff_blocks(task.patch + task.test_patch):  # every line they add is in the later release
                added = [ln[1:] for ln in block.text.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
                (path,) = block.paths
                assert added and all(line in text(path).splitlines() for line in added if line.strip())
        assert set(task.test_files()).isdisjoint(patch_files(task.patch)) and task.FAIL_TO_PASS


@pytest.mark.slow  # a sweep over every bundled task: the fast subset runs one episode of each family
def test_every_instance_is_admitted(backend):
    env_id, results = run(admit_suite(SUITE, sandbox=backend, jobs=2))
    assert env_id == "polar/SWE-v0" and [r.task_id for r in results] == [t.id for t in TASKS]
    assert {r.task_id: r.reasons for r in results if not r.admitted} == {}


def test_the_oracle_resolves_every_instance_through_gym_make(backend):
    env = gym.make("polar/SWE-v0", suite=SUITE, sandbox=backend, max_turns=4)
    try:
        traces = {t.id: run_episode(env, OraclePolicy(), seed=0, task_id=t.id) for t in TASKS}
    finally:
        env.close()
    assert {i: (t.status, t.reward) for i, t in traces.items()} == dict.fromkeys(traces, ("completed", 1.0))


# --- --repos: an environment from the repository itself ----------------------------------------------------

def test_a_mirror_checkout_holds_the_base_commit_and_nothing_after_it(history, tmp_path, monkeypatch):
    repos, base, fix = history
    (tmp_path / "tkem__cachetools.bundle").write_bytes((repos.parent / "tkem__cachetools.bundle").read_bytes())
    (tmp_path / "environments.json").write_text(json.dumps([{
        "repo": "tkem/cachetools", "version": "4.2", "requirements": ["pytest==8.3.5"],
        "test_command": "python3 -m pytest -rA -p no:cacheprovider tests"}]))
    monkeypatch.setenv(REPOS_VARIABLE, str(tmp_path))
    monkeypatch.setenv("POLAR_CACHE", str(tmp_path / "cache"))  # a fresh checkout, not one cached by an earlier run
    task = replace(CACHETOOLS, instance_id="tkem__cachetools-4.2.1-bundle", version="4.2", base_commit=base[:12],
                   eval_script="")
    environment = SweFamily().environment(task)
    assert environment.mirror == mirror_of(task.repo) == tmp_path / "tkem__cachetools.bundle"
    assert environment.requirements == ("pytest==8.3.5",)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    with tarfile.open(fileobj=io.BytesIO(environment.base_archive(task))) as tar:
        tar.extractall(checkout, filter="data")
    assert git(checkout, "rev-parse", "HEAD") == base and git(checkout, "status", "--porcelain") == ""
    assert git(checkout, "log", "--all", "--format=%H").split() == [base]
    assert git(checkout, "for-each-ref", "--format=%(refname)") == "refs/heads/main" and not git(checkout, "remote")
    assert subprocess.run([*GIT, "cat-file", "-e", fix], cwd=checkout).returncode != 0
    with pytest.raises(TaskFormatError, match="has no commit"):
        environment.base_archive(replace(task, instance_id="no-such-commit", base_commit="0" * 40))


def test_a_mirror_with_nothing_that_says_what_its_tests_need_is_refused(history, monkeypatch):
    repos, base, _ = history
    monkeypatch.setenv(REPOS_VARIABLE, str(repos))
    task = replace(CACHETOOLS, instance_id="x", version="4.2", base_commit=base)
    with pytest.raises(TaskFormatError, match="nothing says what its tests need.*`requirements`"):
        repository_environment(task)
    monkeypatch.delenv(REPOS_VARIABLE)
    with pytest.raises(TaskFormatError, match="no environment for repo 'tkem/cachetools' version '4.2'.*--repos"):
        SweFamily().environment(task)


@pytest.mark.parametrize("targets", ["tests", TEST_FILES])
def test_an_instance_from_a_mirror_admits_in_the_local_sandbox_through_the_cli(bwrap, history, tmp_path, targets):
    """With its own targets, or with the test patch's files in the place of `{test_files}`."""
    repos, base, _ = history
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(mirror_row(base, requirements=["pytest==8.3.5"],
                                          test_command=f"python3 -m pytest -rA -p no:cacheprovider {targets}",
                                          **in_swe_bench_s_shape() if targets == TEST_FILES else {})) + "\n")
    done = subprocess.run([sys.executable, "-m", "polar.cli", "tasks", "admit", str(rows), "--sandbox", "local",
                           "--repos", str(repos)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0 and "1/1 task(s)" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    assert ("environment: environment of tkem/cachetools 4.2 from the row's requirements and test_command; Python "
            "3.11") in done.stdout + done.stderr


def test_a_mirror_row_with_nothing_of_its_own_takes_swe_bench_s_table(bwrap, history, tmp_path, monkeypatch):
    """A row as SWE-bench publishes it (no `requirements`, no `test_command`) whose (repo, version) the table has:
    its pip packages and its pytest command, run on the test patch's files, admit it (the table stands in for the
    real one, which has no cachetools)."""
    from polar.envs.swe import swebench_specs

    repos, base, _ = history
    monkeypatch.setenv(REPOS_VARIABLE, str(repos))
    monkeypatch.setattr(swebench_specs, "table", lambda: {"tkem/cachetools": {"4.2": {
        "python": "3.9", "install": "python -m pip install -e .", "pip_packages": ["pytest==8.3.5"],
        "test_cmd": "pytest --no-header -rA --tb=no -p no:cacheprovider"}}})
    task = replace(CACHETOOLS, instance_id="tkem__cachetools-4.2.1-table", version="4.2", base_commit=base,
                   eval_script="")
    environment = repository_environment(task)
    assert environment.requirements == ("pytest==8.3.5", "pytest")
    assert environment.test_command == f"python3 -m pytest --no-header -rA --tb=no -p no:cacheprovider {TEST_FILES}"
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(mirror_row(base, instance_id=task.instance_id, **in_swe_bench_s_shape())) + "\n")
    _, results = run(admit_suite(str(rows), sandbox="local", jobs=1))
    assert [(r.task_id, r.reasons) for r in results] == [(task.instance_id, [])]
    assert results[0].outcomes["environment"] == (  # the report says what the row was graded on, and what it asked
        "environment of tkem/cachetools 4.2 from SWE-bench's spec table (swebench==4.1.0); Python 3.9 asked, 3.11 "
        "used (polar's sandboxes have only 3.11 yet)")
    (row,) = load_instances(str(rows))
    gold = run(SweFamily().grade_patch(row, row.patch, make_backend("local")))
    assert gold.components["resolved"] == 1.0 and "Python 3.9 asked, 3.11 used" in gold.log.splitlines()[0]


def test_a_test_command_for_the_patch_s_files_runs_nothing_when_it_names_none():
    """`{test_files}` with a test patch that changes no .py file: the script says so, and never runs the whole suite
    in their place."""
    from polar.envs.swe.family import default_eval_script

    task = replace(CACHETOOLS, test_patch=CACHETOOLS.test_patch.replace(".py", ".txt"))
    script = default_eval_script(task, f"python3 -m pytest -rA {TEST_FILES}", run_files=False)
    assert "no test ran" in script and "python3 -m pytest" not in script
    named = default_eval_script(CACHETOOLS, f"python3 -m pytest -rA {TEST_FILES} -x", run_files=False)
    files = " ".join(f for f in CACHETOOLS.test_files() if f.endswith(".py"))
    assert f"python3 -m pytest -rA {files} -x\n" in named


def test_an_instance_from_a_mirror_admits_in_docker(docker, history, tmp_path, monkeypatch):
    repos, base, _ = history
    monkeypatch.setenv(REPOS_VARIABLE, str(repos))
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(mirror_row(base, requirements=["pytest==8.3.5"],
                                          test_command="python3 -m pytest -rA -p no:cacheprovider tests")) + "\n")
    _, results = run(admit_suite(str(rows), sandbox="docker", jobs=1))
    assert {r.task_id: r.reasons for r in results} == {"tkem__cachetools-4.2.1-mirror": []}
    assert all(r.admitted for r in results)


CHILD_TEST = '''import subprocess
import sys


def test_the_package_imports_in_a_program_the_tests_start():
    done = subprocess.run([sys.executable, "-c", "import cachetools; print(cachetools.__file__)"], cwd="/testbed",
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("/testbed/"), done.stderr
'''


def test_a_repository_that_asks_for_coverage_and_starts_python_admits(backend, history, tmp_path, monkeypatch):
    """Two things real repositories do that the hardened runner once broke: their addopts ask for `--cov` (the
    pytest-cov that the environment installs loads by name, with autoload still off), and a test starts Python on
    the package from /testbed (the programs the tests start run without PYTHONSAFEPATH)."""
    repos, base, _ = history
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(repos / "tkem__cachetools.git"), str(work))
    git(work, "checkout", "-q", "-B", "main", base)
    (work / "setup.cfg").write_text((work / "setup.cfg").read_text() + "\n[tool:pytest]\n"
                                    "addopts = --cov=cachetools --cov-report=\n")
    (work / "tests" / "test_child.py").write_text(CHILD_TEST)
    git(work, "add", "-A")
    git(work, "commit", "-q", "--no-verify", "-m", "coverage, and a test that starts Python")
    mirrors = tmp_path / "repos"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(mirrors / "tkem__cachetools.git"))
    monkeypatch.setenv(REPOS_VARIABLE, str(mirrors))
    child = "tests/test_child.py::test_the_package_imports_in_a_program_the_tests_start"
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(mirror_row(
        git(work, "rev-parse", "HEAD"), instance_id="tkem__cachetools-4.2.1-coverage",
        PASS_TO_PASS=[*CACHETOOLS.PASS_TO_PASS, child], requirements=["pytest==8.3.5", "pytest-cov==6.0.0"],
        test_command="python3 -m pytest -rA -p no:cacheprovider tests")) + "\n")
    _, results = run(admit_suite(str(rows), sandbox=backend, jobs=1))
    assert {r.task_id: r.reasons for r in results} == {"tkem__cachetools-4.2.1-coverage": []}
    assert all(r.admitted for r in results)
