"""polar/Code-v0: complete a stub Python module; hidden unit tests, run in a fresh sandbox, grade it."""

from __future__ import annotations

import ast
import json
import secrets
from pathlib import Path

from polar.protocols import Grade, Sandbox, SandboxBackend, SandboxSpec
from polar.reward import RewardComponent, RewardSpec
from polar.tasks.code import CodeTask, load_suite

RUNNER = Path(__file__).with_name("code_test_runner.py").read_text()
GRADE_TIMEOUT_S = 120.0


def count_tests(tests: dict[str, str]) -> int:
    """How many test functions the hidden files define, so a module that fails to import scores 0 of N."""
    return sum(
        1
        for source in tests.values()
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    )


class CodeFamily:
    """Task loading, workspace setup and grading for polar/Code-v0."""

    env_id = "polar/Code-v0"
    version = 0
    default_suite = "code"
    reward = RewardSpec(
        (
            RewardComponent("solved", 1.0, 1.0, "outcome", "every hidden test passes"),
            RewardComponent("tests_passed_frac", 0.1, 0.1, "process", "share of hidden tests passed"),
        )
    )

    def load_tasks(self, suite: str | None) -> list[CodeTask]:
        return load_suite(suite)

    def sandbox_spec(self, task: CodeTask, backend: str | None = None) -> SandboxSpec:
        """The bare default sandbox; `backend` is ignored: every backend runs a code task the same way."""
        return SandboxSpec()

    async def setup(self, task: CodeTask, sandbox: Sandbox) -> None:
        for name, text in task.stub.items():
            await sandbox.write(name, text)

    async def grade(self, task: CodeTask, sandbox: Sandbox, backend: SandboxBackend) -> Grade:
        files = {}
        for name in task.files:
            try:
                files[name] = (await sandbox.read(name)).decode("utf-8", errors="replace")
            except FileNotFoundError:
                files[name] = ""
        return await self.grade_files(task, files, backend)

    async def regrade(self, task: CodeTask, artefact: dict, backend: SandboxBackend) -> Grade:
        """Grade a trace's artefact again in a fresh sandbox (the leaderboard's check of a recorded reward)."""
        files = artefact.get("files")
        if not isinstance(files, dict) or sorted(files) != sorted(task.files) or \
                not all(isinstance(text, str) for text in files.values()):
            raise ValueError(f"a {self.env_id} artefact is {{'files': {{name: text}}}} for exactly the task's files "
                             f"{task.files}; got {sorted(files) if isinstance(files, dict) else type(files).__name__}")
        return await self.grade_files(task, files, backend)

    async def grade_files(self, task: CodeTask, files: dict[str, str], backend: SandboxBackend) -> Grade:
        """Run the hidden tests on `files` in a fresh sandbox; also how the leaderboard re-grades."""
        total = count_tests(task.tests)
        grader = await backend.start(SandboxSpec())
        try:
            for name, text in files.items():
                await grader.write(name, text)
            for name, text in task.tests.items():
                await grader.write(f".polar_tests/{name}", text)
            await grader.write(".polar_runner.py", RUNNER)
            nonce = secrets.token_hex(16)  # read from stdin, so code under test cannot forge the result line
            result = await grader.exec(f"python3 .polar_runner.py .polar_tests <<< {nonce}", timeout=GRADE_TIMEOUT_S)
        finally:
            await grader.stop()
        artefact = {"files": files}
        prefix = f"POLAR-RESULT-{nonce} "
        line = next((ln for ln in result.output.splitlines() if ln.startswith(prefix)), None)
        if line is None:
            return Grade(self.reward.zeros(), result.output[-20_000:], artefact,
                         error=f"the test runner printed no result (exit code {result.exit_code})")
        outcome = json.loads(line.removeprefix(prefix))
        passed = len(outcome["passed"])
        log = "\n".join([f"passed {passed}/{total}", *(f"FAILED {k}\n{v}" for k, v in outcome["failed"].items())])
        return Grade(
            {"solved": float(total > 0 and passed == total), "tests_passed_frac": passed / total if total else 0.0},
            log[-20_000:],
            artefact,
        )
