"""polar/SWE-v0: fix an issue in a real repository; swebench's own log parsers and grading decide.

Grading takes the agent's changes as a `git diff` against `base_commit` and never runs anything else of the agent's.
Every grade, live (`grade`) and on the leaderboard (`regrade`), goes through `grade_patch`:

1. `filter_patch` reads the diff strictly (`polar.tasks.swe.diff_blocks`) and drops, naming each in the log, every
   block that is not a well-formed git diff of one file, and every block that touches what steers the test run or
   the interpreter rather than the code under test: test files and folders, `conftest.py` anywhere, pytest's
   configuration files whole (`pytest.ini`, `.pytest.ini`, `pytest.toml`, `tox.ini`, `setup.cfg`, `pyproject.toml`),
   `setup.py` whole and `*.egg-info`/`*.dist-info` (entry points that load pytest plugins), modules that shadow
   pytest (`pytest.py`, `py.py`, `pytest/`, `_pytest/`), start-up hooks (`sitecustomize.py`, `usercustomize.py`,
   `*.pth`), byte code and caches (`__pycache__`, `*.pyc`, `.pytest_cache`), `.git` and `.gitattributes` (how the
   eval script's git writes the test files), and symbolic links out of the repository or onto such a file. The one
   exception is the gold patch's own change to such a file. After the patch is applied in the fresh grading
   sandbox, git lists what really changed; a protected path among them (the filter and `git apply` disagreed) is
   `Grade(tampered=...)`.
2. The eval script runs under `env -i`: PATH from the fresh grading sandbox, HOME, LANG, TMPDIR, the variables the
   repository's environment declares (PYTHONPATH for polar's mounted dependencies; an official image's own ENV), and
   PYTHONSAFEPATH=1 (Python >= 3.11 never puts the working directory on sys.path), PYTHONNOUSERSITE=1,
   PYTHONDONTWRITEBYTECODE=1; no PYTEST_ADDOPTS, PYTHONSTARTUP or BASH_ENV, and no PYTEST_PLUGINS but polar's:
   the pytest plugins polar's environment installed (pytest-cov for a repository whose addopts say `--cov`).
3. polar's own eval script (instances polar builds the environment for, whose rows carry exactly the script
   `default_eval_script` writes for it, or no script) restores the test files, applies the pristine `test_patch` and
   runs `python3 -m pytest -p polar_verdict --rootdir /testbed ARGS` with plugin autoload off (the programs the tests
   start run without PYTHONSAFEPATH, so `python -m package` in /testbed imports the repository). `polar_verdict` is
   written by the grader to /tmp/polar_grader, outside the repository, and loads before any repository code; it sends
   each test's outcome by node id as it is decided, and the session's end, over the eval command's own output, which
   polar reads as it arrives (`read_record`): nothing left in the sandbox counts. The decision (swebench's
   `get_eval_tests_report` / `get_resolution_status`) is fed with that record; no end (pytest never finished:
   `os._exit`, a crash) means no test passed, and a line after the end, or one the recorder never writes, is
   `tampered`. The script runs in two parts: between them (canaries placed, no code of the repository run yet) polar
   reads the test files back (the canaries and mirrors it placed, the XFAIL rule's text), and compares them again
   after the run (`Verdict.changed`: `tampered`). swebench's parser still reads the log, and where the two disagree on
   a FAIL_TO_PASS / PASS_TO_PASS test (forged `PASSED` lines) the grade is `tampered`. The plugin also sees every `==`
   the tests check (pytest's assertion-pass hook hands it their comparisons; unittest's `assertEqual` family is
   wrapped): a graded test passed on a value, not of the tests' own code, that also equals an unrelated object or a
   different value of the other side's builtin type, or is unequal as the builtin it subclasses, is `tampered`.

What stays open (code that defeats polar in memory, rows that bring their own `eval_script` and keep it without the
record) is in envs/swe/README.md, the threat model. A grading run that breaks before the tests start (no start
marker, a sandbox error) is a `Grade(error=...)`, the episode's status `verifier_error`; once the code under test
ran under polar's record, what breaks (the sandbox, the script, the log, the record) is the patch's outcome.
"""

from __future__ import annotations

import asyncio
import functools
import json
import posixpath
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from polar.envs.swe.canaries import PLACER_SOURCE, CanarySet, make_canaries
from polar.envs.swe.environment import (
    PYTEST,
    REGISTRY_VARIABLE,
    TEST_FILES,
    WORKDIR,
    RepoEnvironment,
    load_environments,
    official_image,
    repository_environment,
)
from polar.errors import SandboxError, TaskFormatError
from polar.protocols import EpisodeSetup, ExecResult, Grade, Sandbox, SandboxBackend, SandboxSpec
from polar.reward import RewardComponent, RewardSpec
from polar.tasks.swe import DiffBlock, SweTask, diff_blocks, load_instances, patch_files, unquote_path

EVAL_TIMEOUT_S = 900.0
LOG_LIMIT = 40_000
EVAL_LOG = "/tmp/polar_eval.log"
"""Where the eval script's output goes: a file, not the command's capped output, so a test run that prints more
than a command may (1 MiB) still reaches its end marker."""
DEFAULT_TEST_COMMAND = f"{PYTEST} -rA -p no:cacheprovider"
GRADER_DIR = "/tmp/polar_grader"
VERDICT_PLUGIN = "polar_verdict"
RECORD_FD = 3
"""The descriptor the eval command hands the recorder (`POLAR_RECORD_FD`): a copy of the command's own output, so each
line it sends reaches polar as it is written and none can be taken back."""
RECORD_LIMIT = 64 << 20
"""The grading sandbox's output limit: the record is a line per test."""
CANARY_PLACER = f"{GRADER_DIR}/canary_placer.py"
TEST_PATCH_FILE = f"{GRADER_DIR}/test.patch"
"""The test patch, for polar's own eval script: applied from this file, then deleted before pytest starts."""
ONE_COMMIT = ("rm -rf .git && git init -q && git add -A && "
              "git -c user.name=polar -c user.email=polar@localhost commit -q --no-verify -m graded")
"""The repository's history replaced by one commit of the tree as graded (test patch and canaries in it): code under
test that reads the tests as they were before (`git show HEAD:<file>`) to tell the graded tests from polar's fresh
canaries finds the canaries there too."""
_TEST_DIRS = {"test", "tests", "testing"}
_STEERING_NAMES = {
    "conftest.py": "pytest configuration", "pytest.ini": "pytest configuration", ".pytest.ini": "pytest configuration",
    "pytest.toml": "pytest configuration", ".pytest.toml": "pytest configuration", "tox.ini": "pytest configuration",
    "setup.cfg": "pytest configuration", "pyproject.toml": "pytest configuration",
    "setup.py": "packaging (entry points load pytest plugins)", "pytest.py": "shadows pytest",
    "py.py": "shadows pytest", "sitecustomize.py": "runs at interpreter start-up",
    "usercustomize.py": "runs at interpreter start-up", ".gitattributes": "steers git's checkout of the test files",
    f"{VERDICT_PLUGIN}.py": "shadows polar's verdict plugin",
}
_STEERING_DIRS = {".git": "git's own files", "pytest": "shadows pytest", "_pytest": "shadows pytest",
                  ".pytest_cache": "pytest's cache", "__pycache__": "byte code"}
_STEERING_SUFFIXES = {".pth": "runs at interpreter start-up", ".pyc": "byte code", ".pyo": "byte code",
                      ".egg-info": "packaging (entry points load pytest plugins)",
                      ".dist-info": "packaging (entry points load pytest plugins)", ".egg-link": "packaging"}
_CLEAN_ENV = {"HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp", "PYTHONSAFEPATH": "1", "PYTHONNOUSERSITE": "1",
              "PYTHONDONTWRITEBYTECODE": "1"}
_STEERING_ENV = {"PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONUSERBASE", "BASH_ENV", "ENV", "PATH", "HOME"}
"""Besides every PYTEST_* variable: never taken from an environment's declared variables."""
PLUGIN_SOURCE = Path(__file__).with_name(f"{VERDICT_PLUGIN}.py").read_text()
"""The verdict plugin, copied into the grading sandbox; it names WORKDIR literally (it runs standalone), which
`test_swe` checks against the constant."""


@dataclass(frozen=True)
class Verdict:
    """What polar's verdict plugin recorded: each test's outcome by node id, and the tests in which a value that
    equals anything passed an equality check. Both empty when pytest never finished its session (`found` False)."""

    outcomes: dict[str, str]
    forged: dict[str, str]
    found: bool
    undeclared_xfail: frozenset[str] = frozenset()
    """Tests recorded XFAIL whose file (and every conftest.py above it, all protected from the patch) never
    mentions xfail or expectedFailure: only the code under test can have made them xfail, so they failed."""
    changed: dict[str, str] = field(default_factory=dict)
    """Test files (absolute paths) that no longer hold the bytes polar read back before the run (-> when)."""
    placed: dict[str, str] = field(default_factory=dict)
    """The test files as polar read them back before the run (relative path -> text)."""
    interfered: str | None = None
    """Why the record as received is not the recorder's alone: a line it never writes, or anything after its end."""
    subfailed: frozenset[str] = frozenset()
    """Tests that failed in a subtest (pytest >= 9, pytest-subtests): swebench's log parser reads their own report."""


def read_record(stream: str) -> tuple[dict[str, str], dict | None, str | None]:
    """The recorder's lines as polar received them: each test's last outcome, what the `end` line carried (None: the
    session never ended), and why the stream is not to be believed (`Verdict.interfered`)."""
    outcomes: dict[str, str] = {}
    end: dict | None = None
    lines = stream.splitlines()
    for number, line in enumerate(lines):
        if end is not None:
            return outcomes, end, (f"{len(lines) - number} line(s) reached polar's record after pytest's session "
                                   f"ended (the first: {line[:120]!r}): code that outlived the session wrote them")
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, list) and len(record) == 3 and record[0] == "test" and all(
                isinstance(x, str) for x in record[1:]):
            if record[1] in outcomes and (outcomes[record[1]] == "ERROR" or record[2] != "ERROR"):
                return outcomes, end, (f"polar's record received a second outcome for {record[1]} ({record[2]} after "
                                       f"{outcomes[record[1]]}); the recorder sends one, and an error in teardown")
            outcomes[record[1]] = record[2]
        elif isinstance(record, list) and len(record) == 2 and record[0] == "end" and isinstance(record[1], dict):
            end = record[1]
        else:
            return outcomes, end, f"polar's record carried a line its recorder never writes: {line[:120]!r}"
    return outcomes, end, None


XFAIL_DECLARED = re.compile(r"xfail|expectedFailure")


def is_test_path(path: str, test_files: list[str]) -> bool:
    """Files the agent may not change: the test patch's files, test modules and folders."""
    p = PurePosixPath(path)
    return (path in test_files or p.name in _TEST_DIRS or bool(_TEST_DIRS & set(p.parts[:-1]))
            or re.fullmatch(r"test_.*\.py|.*_test\.py", p.name) is not None)


def protected(path: str, test_files: list[str]) -> str | None:
    """Why grading must not take the agent's version of `path` (a test file, or something that steers pytest or the
    interpreter rather than being code under test); None when it may."""
    p = PurePosixPath(path)
    if is_test_path(path, test_files):
        return "a test file"
    for part in p.parts[:-1]:
        if part in _STEERING_DIRS or part.endswith(tuple(_STEERING_SUFFIXES)):
            return _STEERING_DIRS.get(part) or _STEERING_SUFFIXES[PurePosixPath(part).suffix]
    if p.name in _STEERING_NAMES or p.name in _STEERING_DIRS:
        return _STEERING_NAMES.get(p.name) or _STEERING_DIRS[p.name]
    return _STEERING_SUFFIXES.get(p.suffix)


def _link_problem(path: str, target: str, test_files: list[str]) -> str | None:
    """Why a symbolic link at `path` to `target` must not be graded: it leaves the repository or lands on a
    protected file."""
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
        return f"a symbolic link out of the repository ({target!r})"
    reason = protected(resolved, test_files)
    return f"a symbolic link onto {resolved} ({reason})" if reason else None


def _changes(block: DiffBlock) -> list[str]:
    """What a block does, without the lines that vary between equal changes (index hashes, context)."""
    return [line for line in block.text.splitlines()
            if line.startswith(("+", "-")) and not line.startswith(("+++ ", "--- ")) or "mode " in line]


def filter_patch(diff: str, task: SweTask) -> tuple[str, list[str]]:
    """The agent's diff as the grader applies it, and one line for each block it dropped (paths and why). A block on
    a protected path is kept only when it makes the gold patch's own change to that path."""
    test_files = task.test_files()
    gold = {block.paths: _changes(block) for block in diff_blocks(task.patch)}
    kept, dropped = [], []
    for block in diff_blocks(diff):
        reasons = [block.problem] if block.problem else [
            r for r in (*(protected(p, test_files) for p in block.paths),
                        block.symlink is not None and _link_problem(block.paths[-1], block.symlink, test_files)) if r]
        if reasons and (block.problem or gold.get(block.paths) != _changes(block)):
            dropped.append(f"{', '.join(block.paths) or '(no file)'}: {'; '.join(dict.fromkeys(reasons))}")
        else:
            kept.append(block.text)
    return "".join(kept), dropped


def default_eval_script(task: SweTask, test_command: str = DEFAULT_TEST_COMMAND, run_files: bool = True,
                        canaries: bool = False) -> str:
    """An eval script in swebench's shape for instances that bring none: restore the test files, apply the test
    patch (and with `canaries`, run polar's canary placer), run the tests between the log markers, restore the test
    files again."""
    from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT

    files = task.test_files()
    restore = " ".join(shlex.quote(f) for f in files)
    reset = f"for f in {restore}; do git checkout -q {task.base_commit} -- \"$f\" 2>/dev/null || rm -f \"$f\"; done"
    named = [shlex.quote(f) for f in files if f.endswith(".py")]
    targets = " ".join(named) if run_files and TEST_FILES not in test_command else ""
    lines = ["#!/bin/bash", "set -uxo pipefail",
             "if [ -f /opt/miniconda3/bin/activate ]; then",
             "  source /opt/miniconda3/bin/activate; conda activate testbed",
             "fi",
             f"cd {WORKDIR}"]
    if files and canaries:  # no text of the test patch is left once it is applied (see ONE_COMMIT)
        lines += [reset, f"git apply --verbose {TEST_PATCH_FILE}", f"rm -f {TEST_PATCH_FILE}"]
    elif files:
        lines += [reset, "git apply --verbose - <<'EOF_114329324912'", task.test_patch.rstrip("\n"), "EOF_114329324912"]
    if canaries:
        lines += [f"python3 {CANARY_PLACER}", ONE_COMMIT]
    if TEST_FILES in test_command and not named:  # never the whole suite in their place
        test_command = "echo 'polar: the test command runs the test patch files, and it names no .py file: no test ran'"
    lines += [f": '{START_TEST_OUTPUT}'", f"{test_command.replace(TEST_FILES, ' '.join(named))} {targets}".rstrip(),
              f": '{END_TEST_OUTPUT}'"]
    if files and not canaries:  # with canaries the history is gone, and the grading sandbox with it
        lines.append(reset)
    return "\n".join(lines) + "\n"


def split_eval_script(script: str) -> tuple[str, str]:
    """polar's eval script as two: what prepares the test files (restore, test patch, canaries, one commit), and
    what runs the tests, with the same start (shell options, conda, working directory); polar reads the prepared
    test files back between the two, before any code of the repository runs."""
    from swebench.harness.constants import START_TEST_OUTPUT

    lines = script.splitlines()
    start, cut = lines.index(f"cd {WORKDIR}") + 1, lines.index(f": '{START_TEST_OUTPUT}'")
    return "\n".join(lines[:cut]) + "\n", "\n".join(lines[:start] + lines[cut:]) + "\n"


def _image_env(image: str | None) -> dict[str, str]:
    """An image's own ENV, what its tests were built to run with (read from the engine, not from the container)."""
    if not image:
        return {}
    step = subprocess.run([shutil.which("docker") or "docker", "image", "inspect", "-f", "{{json .Config.Env}}",
                           image], capture_output=True, text=True)
    if step.returncode != 0:
        raise SandboxError(f"could not read the environment of image {image!r}: {step.stderr.strip()[:300]}")
    return dict(item.partition("=")[::2] for item in json.loads(step.stdout) or [])


@dataclass(frozen=True)
class Runtime:
    """How one instance runs on one backend: the sandbox spec, and the environment that makes its repository
    (None: the image already holds it at /testbed)."""

    spec: SandboxSpec
    environment: RepoEnvironment | None


class SweFamily:
    """Task loading, workspace setup and grading for polar/SWE-v0."""

    env_id = "polar/SWE-v0"
    version = 0
    default_suite = "swe-mini"
    reward = RewardSpec(
        (
            RewardComponent("resolved", 1.0, 1.0, "outcome", "swebench's resolution status is RESOLVED_FULL"),
            RewardComponent("f2p_frac", 0.1, 0.1, "process", "share of FAIL_TO_PASS tests that now pass"),
            RewardComponent("p2p_frac", 0.05, 0.05, "process",
                            "share of PASS_TO_PASS tests still passing, once at least one FAIL_TO_PASS test passes"),
        )
    )

    def __init__(self) -> None:
        self.environments = load_environments()

    def load_tasks(self, suite: str | None) -> list[SweTask]:
        return load_instances(suite)

    def runtime(self, task: SweTask, backend: str | None = None) -> Runtime:
        """The official image on docker when the engine has it; else polar's environment for the repository."""
        if backend in (None, "docker") and (image := official_image(task)):
            return Runtime(SandboxSpec(image=image, workdir=WORKDIR), None)
        environment = self.environment(task)
        return Runtime(environment.sandbox_spec(backend), environment)

    def environment(self, task: SweTask) -> RepoEnvironment:
        """A bundled environment for the repository and version, else one from the repository's mirror (--repos)."""
        environment = self.environments.get((task.repo, task.version)) or repository_environment(task)
        if environment is None:
            known = sorted({f"{r} {v}" for r, v in self.environments})
            raise TaskFormatError(
                f"instance {task.instance_id!r}: no environment for repo {task.repo!r} version {task.version!r}: "
                f"polar builds environments for {', '.join(known) or 'no repository'}, and for any repository "
                f"from a local git mirror (`--repos DIR` with DIR/{task.repo.replace('/', '__')}.git or .bundle); "
                f"otherwise an instance runs in its official swebench image (sandbox='docker'), which must be in the "
                f"Docker engine or pulled (`polar images pull`, ${REGISTRY_VARIABLE})")
        return environment

    def sandbox_spec(self, task: SweTask, backend: str | None = None) -> SandboxSpec:
        """The agent's sandbox. PolarEnv passes its backend's name: on docker it is the instance's image (official,
        else the environment's `polar/swe-env` image); otherwise the environment mounted read-only, which any
        backend runs (`backend=None` asks for that)."""
        return self.runtime(task, backend).spec

    async def setup(self, task: SweTask, sandbox: Sandbox) -> EpisodeSetup:
        official = sandbox.spec.image is not None and sandbox.spec.image == official_image(task)
        await self.materialize(task, sandbox, None if official else self.environment(task))
        return EpisodeSetup()

    async def materialize(self, task: SweTask, sandbox: Sandbox, environment: RepoEnvironment | None) -> None:
        """Put the instance's repository, at base_commit, in the sandbox's /testbed."""
        if environment is not None:
            archive = await asyncio.to_thread(environment.base_archive, task)
            await sandbox.write("/tmp/polar_base.tar.gz", archive)
            result = await sandbox.exec(f"tar -xzf /tmp/polar_base.tar.gz -C {WORKDIR} --no-same-owner && "
                                        "rm -f /tmp/polar_base.tar.gz", timeout=120)
            if result.exit_code != 0:
                raise SandboxError(f"could not unpack {task.instance_id}'s repository: {result.output[-1000:]}")
        head = await sandbox.exec(f"cd {WORKDIR} && git rev-parse HEAD", timeout=60)
        if head.exit_code != 0 or not head.output.strip().startswith(task.base_commit):
            raise SandboxError(f"{task.instance_id}: {WORKDIR} is not at base_commit {task.base_commit} "
                               f"({head.output.strip()[-300:]})")

    async def agent_patch(self, task: SweTask, sandbox: Sandbox) -> tuple[str, str]:
        """The agent's changes against base_commit, as git prints them in its sandbox (`grade_patch` filters them);
        and a note when no diff could be taken."""
        result = await sandbox.exec(
            f"cd {WORKDIR} && git add -A && git -c core.fileMode=false diff --cached --binary --no-color "
            f"--no-ext-diff {task.base_commit} > /tmp/polar_agent.patch", timeout=120)
        if result.exit_code != 0:
            return "", f"no diff could be taken (the agent broke the git repository?): {result.output[-1000:]}\n"
        return (await sandbox.read("/tmp/polar_agent.patch")).decode("utf-8", "replace"), ""

    async def grade(self, task: SweTask, sandbox: Sandbox, backend: SandboxBackend, state: None = None) -> Grade:
        patch, note = await self.agent_patch(task, sandbox)
        grade = await self.grade_patch(task, patch, backend)
        grade.log = note + grade.log
        return grade

    async def regrade(self, task: SweTask, artefact: dict, backend: SandboxBackend) -> Grade:
        """Grade a trace's artefact (`{"patch": diff}`) again in a fresh sandbox."""
        patch = artefact.get("patch") if isinstance(artefact, dict) else None
        if not isinstance(patch, str):
            raise ValueError(f"a {self.env_id} artefact is {{'patch': <git diff>}}; got "
                             f"{sorted(artefact) if isinstance(artefact, dict) else type(artefact).__name__}")
        return await self.grade_patch(task, patch, backend)

    async def grade_patch(self, task: SweTask, patch: str, backend: SandboxBackend) -> Grade:
        """Filter `patch`, apply it at base_commit in a fresh sandbox, run the eval script in a clean environment and
        grade with swebench (fed with polar's verdict record when polar wrote the script). Every grade comes here."""
        patch, dropped = filter_patch(patch, task)
        note = "".join(f"dropped from the patch: {line}\n" for line in dropped)
        artefact = {"patch": patch}
        try:
            runtime = await asyncio.to_thread(self.runtime, task, getattr(backend, "name", None))
            grader = await backend.start(replace(runtime.spec, output_limit_bytes=RECORD_LIMIT))
        except (SandboxError, TaskFormatError, OSError) as e:
            return Grade(self.reward.zeros(), f"{note}the grading sandbox did not start: {e}", artefact,
                         error=f"grading failed: {e}")
        ours = self.writes_eval_script(task, runtime.environment)
        if runtime.environment is not None:  # what it was graded on, a Python other than the one asked for included
            note = f"polar: {runtime.environment.describe()}\n{note}"
        try:
            await self.materialize(task, grader, runtime.environment)
            before = await self._worktree(task, grader)
            applied, log = await self._apply(grader, patch)
            log = note + log
            if not applied:
                return Grade(self.reward.zeros(), log[-LOG_LIMIT:], artefact)
            after = await self._worktree(task, grader)
            if sneaked := await self._sneaked(task, grader, before, after):
                return Grade(self.reward.zeros(), log[-LOG_LIMIT:], artefact,
                             tampered=f"the applied patch changed protected files the filter had not seen: "
                                      f"{', '.join(sneaked)}")
            canaries = await self._canaries(task, grader) if ours else None
            if ours:
                await grader.write(f"{GRADER_DIR}/{VERDICT_PLUGIN}.py", PLUGIN_SOURCE)
                await grader.write(TEST_PATCH_FILE, task.test_patch.rstrip("\n") + "\n")
            script = self.eval_script(task, runtime.environment)
            env = await asyncio.to_thread(self.clean_env, runtime, ours)
            assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
            run = f'env -i PATH="$PATH" {assignments} bash --noprofile --norc'
            pristine: dict[str, bytes] = {}
            if ours:  # the test files as polar placed them, read back before any code of the repository runs
                prepare, script = split_eval_script(script)
                await grader.write("/tmp/polar_prepare.sh", prepare)
                await grader.exec(f"{run} /tmp/polar_prepare.sh > {EVAL_LOG} 2>&1", timeout=EVAL_TIMEOUT_S)
                pristine = await self._read_tests(task, grader)
            await grader.write("/tmp/polar_eval.sh", script)
            await grader.mark_processes()
            try:
                result = await grader.exec(f"{run} /tmp/polar_eval.sh {f'{RECORD_FD}>&1 >>' if ours else '>'} "
                                           f"{EVAL_LOG} 2>&1", timeout=EVAL_TIMEOUT_S)
                await grader.reset_processes()  # nothing the tests left running writes into polar's later reads
            except SandboxError as e:  # with polar's record, the code under test ran: what it broke is its outcome
                if not ours:
                    raise
                return Grade(self.reward.zeros(), f"{log}\n>>>>> polar: the grading sandbox broke while the tests ran "
                             f"({e}); polar's record never ended: no test passed\n"[-LOG_LIMIT:], artefact)
            part = 16 << 20  # a log past twice this was flooded: polar reads its head (the start marker) and tail
            await grader.exec(f"f={EVAL_LOG}; n=$(stat -c %s $f); [ $n -le {2 * part} ] || {{ {{ head -c {part} $f; "
                              f"echo; echo polar cut $((n - {2 * part})) bytes; tail -c {part} $f; }} > $f.cut && "
                              f"mv $f.cut $f; }}", timeout=120)
            output = (await grader.read(EVAL_LOG)).decode("utf-8", "replace")
            record = await self._verdict(grader, pristine, result) if ours else None
        except (SandboxError, TaskFormatError, OSError) as e:
            return Grade(self.reward.zeros(), f"{note}grading failed: {e}", artefact, error=f"grading failed: {e}")
        finally:
            await grader.stop()
        return self._decide(task, runtime.environment, log + output, result.timed_out, artefact, record, canaries)

    async def _canaries(self, task: SweTask, grader: Sandbox) -> CanarySet:
        """Fresh canaries for the instance's Python test files, written with the placer that the eval script runs
        once the test patch is applied (`polar.envs.swe.canaries`)."""
        texts = {}
        for path in (f for f in task.test_files() if f.endswith(".py")):
            try:
                texts[path] = (await grader.read(f"{WORKDIR}/{path}")).decode("utf-8", "replace")
            except FileNotFoundError:
                texts[path] = ""
        canaries = make_canaries(texts, task.test_patch, graded=(*task.FAIL_TO_PASS, *task.PASS_TO_PASS))
        await grader.write(f"{GRADER_DIR}/canaries.json", canaries.placer_data())
        await grader.write(CANARY_PLACER, PLACER_SOURCE)
        return canaries

    async def _worktree(self, task: SweTask, grader: Sandbox) -> dict[str, tuple[str, str]]:
        """Every path that differs from base_commit in the grading sandbox (ignored files included), by git's own
        account: path -> (mode, blob). A temporary index leaves the repository's own untouched."""
        index = "GIT_INDEX_FILE=/tmp/polar_index"
        result = await grader.exec(
            f"cd {WORKDIR} && cp .git/index /tmp/polar_index && {index} git add -A -f && "
            f"{index} git diff --cached --raw --no-renames --abbrev=40 {task.base_commit}", timeout=300)
        if result.exit_code != 0:
            raise SandboxError(f"git could not list what differs from base_commit: {result.output[-1000:]}")
        return {unquote_path(path): (mode, blob)
                for mode, blob, path in re.findall(r"^:\d{6} (\d{6}) \w+ (\w+) \w+\t(.*)$", result.output, re.M)}

    async def _sneaked(self, task: SweTask, grader: Sandbox, before: dict, after: dict) -> list[str]:
        """Protected paths the applied patch changed after all (the filter and `git apply` read it differently);
        the gold patch's own paths aside."""
        test_files, gold = task.test_files(), set(patch_files(task.patch))
        found = []
        for path in sorted(p for p in {*before, *after} - gold if before.get(p) != after.get(p)):
            reason = protected(path, test_files)
            mode, blob = after.get(path, ("", ""))
            if reason is None and mode == "120000":
                target = await grader.exec(f"cd {WORKDIR} && git cat-file blob {blob}", timeout=60)
                reason = _link_problem(path, target.output, test_files)
            if reason:
                found.append(f"{path} ({reason})")
        return found

    async def _read_tests(self, task: SweTask, grader: Sandbox, paths: list[str] | None = None) -> dict[str, bytes]:
        """The test code pytest will run, read from the grading sandbox (path -> bytes; a missing file left out):
        the Python test files of the test patch, the files of the graded tests, and every `conftest.py` in their
        folders and the folders above."""
        if paths is None:
            files = {f for f in (*task.test_files(), *(t.split("::")[0] for t in (*task.FAIL_TO_PASS,
                                                                               *task.PASS_TO_PASS)))
                     if f.endswith(".py") and not f.startswith(("/", "..")) and "/../" not in f}
            paths = sorted(files | {str(PurePosixPath(*PurePosixPath(f).parts[:i], "conftest.py"))
                                    for f in files for i in range(len(PurePosixPath(f).parts))})
        found = {}
        for path in paths:
            try:
                found[path] = await grader.read(f"{WORKDIR}/{path}")
            except (FileNotFoundError, IsADirectoryError, SandboxError):
                continue
        return found

    async def _verdict(self, grader: Sandbox, pristine: dict[str, bytes], run: ExecResult) -> Verdict:
        """What the recorder sent over the eval command's output (`run`), and the test files that are no longer what
        polar read back before the run (`pristine`)."""
        after = await self._read_tests(None, grader, list(pristine)) if pristine else {}
        changed = {f"{WORKDIR}/{path}": "after the run" for path in pristine if after.get(path) != pristine[path]}
        outcomes, end, interfered = read_record("" if run.timed_out else run.output)
        if run.truncated:  # a line per test never comes near it
            interfered = f"polar's record passed its limit of {RECORD_LIMIT >> 20} MiB: something flooded it"
        forged, subfailed = ((end or {}).get(key, {}) for key in ("forged", "subfailed"))
        if end is None or not all(isinstance(x, dict) and all(isinstance(v, str) for v in x.values())
                                  for x in (forged, subfailed)):
            return Verdict({}, {}, False, changed=changed, interfered=interfered)
        return Verdict(outcomes, forged, True, self._undeclared_xfail(pristine, outcomes), changed,
                       {p: d.decode("utf-8", "replace") for p, d in pristine.items()}, interfered, frozenset(subfailed))

    def _undeclared_xfail(self, pristine: dict[str, bytes], outcomes: dict[str, str]) -> frozenset[str]:
        """The XFAIL tests whose own file and conftest.py files (the test code, which the patch cannot change), as
        polar read them before the run, never declare an expected failure (`Verdict.undeclared_xfail`)."""
        undeclared = set()
        for node_id in (n for n, status in outcomes.items() if status == "XFAIL"):
            file = PurePosixPath(node_id.split("::")[0])
            conftests = [str(PurePosixPath(*file.parts[:i], "conftest.py")) for i in range(len(file.parts))]
            if not any(XFAIL_DECLARED.search(pristine.get(path, b"").decode("utf-8", "replace"))
                       for path in (str(file), *conftests)):
                undeclared.add(node_id)
        return frozenset(undeclared)

    def clean_env(self, runtime: Runtime, ours: bool) -> dict[str, str]:
        """The eval script's whole environment but PATH (the fresh grading sandbox's): what the repository's
        environment declares (polar's spec, or an official image's own ENV), less what steers Python, pytest or
        bash, plus polar's fixed settings; with polar's script, the verdict plugin's folder and no plugin autoload."""
        declared = runtime.spec.env if runtime.environment else _image_env(runtime.spec.image)
        env = {k: v for k, v in declared.items() if not k.startswith("PYTEST_") and k not in _STEERING_ENV}
        env |= _CLEAN_ENV
        if ours:
            env["PYTHONPATH"] = ":".join(filter(None, (env.get("PYTHONPATH"), GRADER_DIR)))
            env["POLAR_RECORD_FD"] = str(RECORD_FD)
            if runtime.environment:  # what polar's environment installed loads by name, nothing else
                env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
                if plugins := runtime.environment.pytest_plugins():
                    env["PYTEST_PLUGINS"] = ",".join(plugins)
        return env

    async def _apply(self, grader: Sandbox, patch: str) -> tuple[bool, str]:
        """Apply the patch with swebench's chain of `git apply` / `patch` commands, as its harness does."""
        from swebench.harness.constants import APPLY_PATCH_FAIL, APPLY_PATCH_PASS
        from swebench.harness.run_evaluation import GIT_APPLY_CMDS

        if not patch.strip():
            return True, "empty patch: the tests run on base_commit\n"
        await grader.write("/tmp/polar_model.patch", patch)
        for attempt, command in enumerate(GIT_APPLY_CMDS):
            if attempt:
                await grader.exec(f"cd {WORKDIR} && git checkout -- . && git clean -fdq", timeout=60)
            result = await grader.exec(f"cd {WORKDIR} && {command} /tmp/polar_model.patch", timeout=120)
            if result.exit_code == 0:
                return True, f"{APPLY_PATCH_PASS}:\n{result.output[-2000:]}\n"
        return False, f"{APPLY_PATCH_FAIL}:\n{result.output[-4000:]}\n"

    def writes_eval_script(self, task: SweTask, environment: RepoEnvironment | None) -> bool:
        """Whether polar writes the eval script (with its verdict record): the row has none, or exactly the one
        `default_eval_script` writes for polar's environment of the repository (every swe-mini row)."""
        return not task.eval_script or environment is not None and task.eval_script == default_eval_script(
            task, environment.test_command, run_files=False)

    def eval_script(self, task: SweTask, environment: RepoEnvironment | None) -> str:
        if not self.writes_eval_script(task, environment):
            return task.eval_script
        command = (environment.test_command if environment else DEFAULT_TEST_COMMAND).replace(
            PYTEST, f"{PYTEST} -p {VERDICT_PLUGIN} -o enable_assertion_pass_hook=true --rootdir {WORKDIR}", 1)
        return default_eval_script(task, command, run_files=environment is None, canaries=True)

    def test_spec(self, task: SweTask, environment: RepoEnvironment | None):
        from swebench.harness.constants import FAIL_ONLY_REPOS, EvalType
        from swebench.harness.utils import make_test_spec

        eval_type = task.eval_type or (EvalType.FAIL_ONLY.value if task.repo in FAIL_ONLY_REPOS
                                       else EvalType.PASS_AND_FAIL.value)
        return make_test_spec({**task.to_record(), "eval_script": self.eval_script(task, environment),
                               "log_parser": task.log_parser or "parse_log_pytest", "eval_type": eval_type,
                               "image": task.image or (environment.image if environment else "")})

    def _decide(self, task: SweTask, environment: RepoEnvironment | None, log: str, timed_out: bool,
                artefact: dict, verdict: Verdict | None, canaries: CanarySet | None = None) -> Grade:
        """swebench's verdict: the outcomes (polar's `verdict` record when there is one, else the eval log as
        swebench's parser reads it) compared with FAIL_TO_PASS/PASS_TO_PASS and resolved. A canary that must fail and
        passed, a graded test passed on a forged equality, or a record and a log that disagree on a graded test, is
        tampering."""
        from swebench.harness.constants import (
            END_TEST_OUTPUT,
            FAIL_TO_PASS,
            PASS_TO_PASS,
            START_TEST_OUTPUT,
            TESTS_TIMEOUT,
            EvalType,
            ResolvedStatus,
        )
        from swebench.harness.grading import (
            compute_fail_to_pass,
            compute_pass_to_pass,
            get_eval_tests_report,
            get_logs_eval,
            get_resolution_status,
            test_passed,
        )

        spec = self.test_spec(task, environment)
        if timed_out:
            log += f"\n{TESTS_TIMEOUT}: the tests ran past {EVAL_TIMEOUT_S:g}s\n"
        elif START_TEST_OUTPUT not in log or END_TEST_OUTPUT not in log and verdict is None:  # else: the record
            return Grade(self.reward.zeros(), log[-LOG_LIMIT:], artefact,
                         error="the eval script printed no test-output markers: it broke before or while running "
                               "the tests")
        with tempfile.TemporaryDirectory(prefix="polar-swe-log-") as tmp:
            (Path(tmp) / "test_output.txt").write_text(log)
            status_map, found = get_logs_eval(spec, str(Path(tmp) / "test_output.txt"))
        if verdict is not None:
            graded = (*spec.FAIL_TO_PASS, *spec.PASS_TO_PASS)
            own = functools.partial(canaries.restore, placed=verdict.placed) if canaries else lambda r: r
            outcomes, forged_at = own(verdict.outcomes), own(verdict.forged)  # under the graded tests' own names
            forged = [f"{t}: {forged_at[t]}" for t in graded if t in forged_at and test_passed(t, outcomes)]
            logged = own(status_map) if found else {}
            subfailed = own(dict.fromkeys(verdict.subfailed))  # the log shows their own report, which passed
            disagree = [t for t in graded if test_passed(t, outcomes) != test_passed(t, logged) and t not in subfailed]
            log += (f"\n>>>>> polar verdict record: {len(verdict.outcomes)} test outcome(s)\n" if verdict.found else
                    "\n>>>>> polar verdict record: missing (pytest did not finish its session): no test passed\n")
            subverted, line = canaries.check(verdict.outcomes, verdict.placed) if canaries else (None, "")
            log += line
            if canaries and (stale := canaries.stale({**verdict.outcomes, **status_map}, verdict.placed)):
                subverted = (f"the record or the log has an outcome for {stale[0]}, a graded test that ran under a "
                             f"fresh name: pytest never reported it")
            if verdict.interfered:
                subverted = verdict.interfered
            if verdict.changed:
                subverted = (f"the test files pytest ran were not the ones polar placed: {len(verdict.changed)} "
                             f"changed (" + "; ".join(f"{k}, {v}" for k, v in list(verdict.changed.items())[:3]) + ")")
            if subverted:
                return Grade(self.reward.zeros(), log[-LOG_LIMIT:], artefact, tampered=subverted)
            if forged:
                return Grade(self.reward.zeros(), log[-LOG_LIMIT:], artefact, tampered=(
                    f"{len(forged)} graded test(s) passed on an equality the code under test forged ("
                    f"{'; '.join(forged[:3])})"))
            if disagree and not timed_out:
                return Grade(self.reward.zeros(), log[-LOG_LIMIT:], artefact, tampered=(
                    f"the test log and polar's verdict record disagree on {len(disagree)} graded test(s) "
                    f"({', '.join(disagree[:5])}): something in the repository wrote test results"))
            status_map, found = outcomes, verdict.found and not timed_out
            if verdict.undeclared_xfail:
                status_map = own({t: "FAILED" if t in verdict.undeclared_xfail else s
                                  for t, s in verdict.outcomes.items()})
                log += (f">>>>> polar: {len(verdict.undeclared_xfail)} test(s) ended XFAIL though no test code "
                        f"declares an expected failure; counted as failed: "
                        f"{', '.join(sorted(verdict.undeclared_xfail)[:5])}\n")
        report = get_eval_tests_report(status_map, {"instance_id": task.instance_id, FAIL_TO_PASS: spec.FAIL_TO_PASS,
                                                    PASS_TO_PASS: spec.PASS_TO_PASS},
                                       eval_type=EvalType(spec.eval_type))
        if not found:  # swebench found no valid test results (a crash during collection, a timeout): nothing passes
            report[FAIL_TO_PASS] = {"success": [], "failure": list(spec.FAIL_TO_PASS)}
            report[PASS_TO_PASS] = {"success": [], "failure": list(spec.PASS_TO_PASS)}
        status = get_resolution_status(report)
        f2p = compute_fail_to_pass(report)
        p2p = compute_pass_to_pass(report) if report[FAIL_TO_PASS]["success"] else 0.0
        summary = {"resolution": status, "fail_to_pass": report[FAIL_TO_PASS], "pass_to_pass_failed":
                   report[PASS_TO_PASS]["failure"], "pass_to_pass_passed": len(report[PASS_TO_PASS]["success"])}
        log = log[-LOG_LIMIT:] + "\n>>>>> polar swebench report\n" + json.dumps(summary, indent=1)
        return Grade({"resolved": float(status == ResolvedStatus.FULL.value), "f2p_frac": f2p, "p2p_frac": p2p},
                     log, artefact)

