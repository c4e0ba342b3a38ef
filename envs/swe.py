"""polar/SWE-v0: fix an issue in a real repository; swebench's own log parsers and grading decide.

Grading takes the agent's changes as a `git diff` against `base_commit` (edits to test files dropped: they
never reach the grader), applies them in a fresh sandbox at `base_commit` the way swebench's harness does,
runs the instance's eval script (it restores the test files, applies the pristine `test_patch` and runs the
tests between swebench's log markers), parses the log with swebench's parser for the instance and decides
FAIL_TO_PASS / PASS_TO_PASS with swebench's grading functions. A grading run that breaks (no log markers, a
sandbox error) is a `Grade(error=...)`: the episode's status becomes `verifier_error` and the log is kept.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from polar.envs.swe_environment import WORKDIR, RepoEnvironment, load_environments, official_image
from polar.errors import SandboxError, TaskFormatError
from polar.protocols import Grade, Sandbox, SandboxBackend, SandboxSpec
from polar.reward import RewardComponent, RewardSpec
from polar.tasks.swe import SweTask, load_instances, patch_files

EVAL_TIMEOUT_S = 900.0
LOG_LIMIT = 40_000
DEFAULT_TEST_COMMAND = "python3 -m pytest -rA -p no:cacheprovider"
_TEST_DIRS = {"test", "tests", "testing"}
_TEST_CONFIG = {"conftest.py", "pytest.ini", "tox.ini"}


def is_test_path(path: str, test_files: list[str]) -> bool:
    """Files the agent may not change: the test patch's files, test modules and folders, pytest configuration."""
    p = PurePosixPath(path)
    return (path in test_files or p.name in _TEST_CONFIG or bool(_TEST_DIRS & set(p.parts[:-1]))
            or re.fullmatch(r"test_.*\.py|.*_test\.py", p.name) is not None)


def split_patch(diff: str, test_files: list[str]) -> tuple[str, list[str]]:
    """The diff without the blocks that touch test files, and the paths it dropped."""
    blocks = re.split(r"(?m)^(?=diff --git )", diff)
    kept, dropped = [], []
    for block in blocks:
        paths = patch_files(block)
        if paths and any(is_test_path(p, test_files) for p in paths):
            dropped += paths
        elif block.strip():
            kept.append(block)
    return "".join(kept), dropped


def default_eval_script(task: SweTask, test_command: str = DEFAULT_TEST_COMMAND, run_files: bool = True) -> str:
    """An eval script in swebench's shape for instances that bring none: restore the test files, apply the test
    patch, run the tests between the log markers, restore the test files again."""
    from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT

    files = task.test_files()
    restore = " ".join(shlex.quote(f) for f in files)
    reset = f"for f in {restore}; do git checkout -q {task.base_commit} -- \"$f\" 2>/dev/null || rm -f \"$f\"; done"
    targets = " ".join(shlex.quote(f) for f in files if f.endswith(".py")) if run_files else ""
    lines = ["#!/bin/bash", "set -uxo pipefail",
             "if [ -f /opt/miniconda3/bin/activate ]; then",
             "  source /opt/miniconda3/bin/activate; conda activate testbed",
             "fi",
             f"cd {WORKDIR}"]
    if files:
        lines += [reset, "git apply --verbose - <<'EOF_114329324912'", task.test_patch.rstrip("\n"), "EOF_114329324912"]
    lines += [f": '{START_TEST_OUTPUT}'", f"{test_command} {targets}".rstrip(), f": '{END_TEST_OUTPUT}'"]
    if files:
        lines.append(reset)
    return "\n".join(lines) + "\n"


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
        environment = self.environments.get((task.repo, task.version))
        if environment is None:
            known = sorted({f"{r} {v}" for r, v in self.environments})
            raise TaskFormatError(
                f"instance {task.instance_id!r}: no environment for repo {task.repo!r} version {task.version!r}: "
                f"polar builds environments for {', '.join(known) or 'no repository'}; other repositories run in "
                f"their official swebench image, which must already be in the Docker engine (sandbox='docker')")
        return environment

    def sandbox_spec(self, task: SweTask, backend: str | None = None) -> SandboxSpec:
        """The agent's sandbox. PolarEnv passes its backend's name: on docker it is the instance's image (official,
        else the environment's `polar/swe-env` image); otherwise the environment mounted read-only, which any
        backend runs (`backend=None` asks for that)."""
        return self.runtime(task, backend).spec

    async def setup(self, task: SweTask, sandbox: Sandbox) -> None:
        official = sandbox.spec.image is not None and sandbox.spec.image == official_image(task)
        await self.materialize(task, sandbox, None if official else self.environment(task))

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
        """The agent's changes against base_commit, without test files; and a note of what was dropped."""
        result = await sandbox.exec(
            f"cd {WORKDIR} && git add -A && git -c core.fileMode=false diff --cached --binary --no-color "
            f"--no-ext-diff {task.base_commit} > /tmp/polar_agent.patch", timeout=120)
        if result.exit_code != 0:
            return "", f"no diff could be taken (the agent broke the git repository?): {result.output[-1000:]}\n"
        patch, dropped = split_patch((await sandbox.read("/tmp/polar_agent.patch")).decode("utf-8", "replace"),
                                     task.test_files())
        return patch, (f"dropped the agent's changes to test files: {', '.join(dropped)}\n" if dropped else "")

    async def grade(self, task: SweTask, sandbox: Sandbox, backend: SandboxBackend) -> Grade:
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
        return await self.grade_patch(task, split_patch(patch, task.test_files())[0], backend)

    async def grade_patch(self, task: SweTask, patch: str, backend: SandboxBackend) -> Grade:
        """Apply `patch` at base_commit in a fresh sandbox, run the eval script, grade with swebench."""
        artefact = {"patch": patch}
        try:
            runtime = await asyncio.to_thread(self.runtime, task, getattr(backend, "name", None))
            grader = await backend.start(runtime.spec)
        except (SandboxError, TaskFormatError, OSError) as e:
            return Grade(self.reward.zeros(), f"the grading sandbox did not start: {e}", artefact,
                         error=f"grading failed: {e}")
        try:
            await self.materialize(task, grader, runtime.environment)
            applied, log = await self._apply(grader, patch)
            if not applied:
                return Grade(self.reward.zeros(), log[-LOG_LIMIT:], artefact)
            await grader.write("/tmp/polar_eval.sh", self.eval_script(task, runtime.environment))
            result = await grader.exec("bash /tmp/polar_eval.sh", timeout=EVAL_TIMEOUT_S)
        except (SandboxError, TaskFormatError, OSError) as e:
            return Grade(self.reward.zeros(), f"grading failed: {e}", artefact, error=f"grading failed: {e}")
        finally:
            await grader.stop()
        return self._decide(task, runtime.environment, log + result.output, result.timed_out, artefact)

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

    def eval_script(self, task: SweTask, environment: RepoEnvironment | None) -> str:
        if task.eval_script:
            return task.eval_script
        return default_eval_script(task, environment.test_command if environment else DEFAULT_TEST_COMMAND)

    def test_spec(self, task: SweTask, environment: RepoEnvironment | None):
        from swebench.harness.constants import FAIL_ONLY_REPOS, EvalType
        from swebench.harness.utils import make_test_spec

        eval_type = task.eval_type or (EvalType.FAIL_ONLY.value if task.repo in FAIL_ONLY_REPOS
                                       else EvalType.PASS_AND_FAIL.value)
        return make_test_spec({**task.to_record(), "eval_script": self.eval_script(task, environment),
                               "log_parser": task.log_parser or "parse_log_pytest", "eval_type": eval_type,
                               "image": task.image or (environment.image if environment else "")})

    def _decide(self, task: SweTask, environment: RepoEnvironment | None, log: str, timed_out: bool,
                artefact: dict) -> Grade:
        """swebench's verdict on the eval log: parse it, compare with FAIL_TO_PASS/PASS_TO_PASS, resolve."""
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
        )

        spec = self.test_spec(task, environment)
        if timed_out:
            log += f"\n{TESTS_TIMEOUT}: the tests ran past {EVAL_TIMEOUT_S:g}s\n"
        elif START_TEST_OUTPUT not in log or END_TEST_OUTPUT not in log:
            return Grade(self.reward.zeros(), log[-LOG_LIMIT:], artefact,
                         error="the eval script printed no test-output markers: it broke before or while running "
                               "the tests")
        with tempfile.TemporaryDirectory(prefix="polar-swe-log-") as tmp:
            (Path(tmp) / "test_output.txt").write_text(log)
            status_map, found = get_logs_eval(spec, str(Path(tmp) / "test_output.txt"))
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

