"""polar/Code-v0: complete a stub Python module; hidden unit tests grade it, from outside the module's reach.

Grading splits trust across processes, since any verdict that comes from a process running the module's code can
be forged. The test driver (`driver.py`) runs the hidden tests in a fresh Python on the host, with a
clean environment, in a temp directory the sandbox never sees; no code of the module runs in it. The module runs
in a fresh grading sandbox, in a new subject process per test (`subject.py`), which answers the driver's
requests over a Unix socket mounted into the sandbox (`code_rpc.py`: a strict codec of plain values; objects stay
where they live, behind handles). The verdict is what the driver prints on its stdout, read here.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import json
import os
import shlex
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from polar.errors import SandboxError
from polar.protocols import EpisodeSetup, Grade, Mount, Sandbox, SandboxBackend, SandboxSpec
from polar.python_ast import parse_python
from polar.reward import RewardComponent, RewardSpec
from polar.scratch import scratch_root
from polar.tasks.code import CodeTask, load_suite

HERE = Path(__file__).parent
DRIVER_FILES = ("driver.py", "code_rpc.py")
SUBJECT_FILES = ("subject.py", "code_rpc.py")
SUBJECT_DIR = "/polar-grader"
"""Where the grading sandbox sees the subject's code and the driver's socket (read-only)."""
IMPORT_S = 10.0
"""How long a test's subject may take to import the module, on the driver's clock, from its connection."""
PER_TEST_S = 60.0
"""Each test's default time on the driver's clock once the module is imported (a task's `test_timeout_s` sets its
own). Every use of the module is a round trip to the sandbox (50 to 150 µs on a busy machine), and a bundled test
makes up to 120,000 of them."""
CONNECT_S = 10.0
"""How long the driver waits for a test's subject to connect."""
GRADE_TIMEOUT_S = 120.0
"""The whole grade; tests without a verdict by then fail."""
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def test_ids(tests: dict[str, str]) -> list[tuple[str, str]]:
    """(file, function) of each hidden test, in order; a module that fails to import scores 0 of these."""
    return [(file, node.name) for file, source in tests.items() for node in parse_python(source).body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]


class CodeFamily:
    """Task loading, workspace setup and grading for polar/Code-v0."""

    env_id = "polar/Code-v0"
    version = 0
    default_suite = "code"
    reward = RewardSpec(
        (
            RewardComponent("solved", 1.0, 1.0, "outcome", "every hidden test passes"),
            # reported, pays nothing: a degenerate module passes some tests by accident (a constant function 1 of 7
            # of a task's tests, identity encode/decode a round trip), and GRPO climbed that when it paid 0.1 x the
            # share (the learning benchmark at lr 5e-5: replies collapsed to one-line bodies; benchmarks/README.md)
            RewardComponent("tests_passed_frac", 0.0, 0.0, "process", "share of hidden tests passed (pays nothing)"),
        )
    )

    def load_tasks(self, suite: str | None) -> list[CodeTask]:
        return load_suite(suite)

    def sandbox_spec(self, task: CodeTask, backend: str | None = None) -> SandboxSpec:
        """The bare default sandbox; `backend` is ignored: every backend runs a code task the same way."""
        return SandboxSpec()

    async def setup(self, task: CodeTask, sandbox: Sandbox) -> EpisodeSetup:
        for name, text in task.stub.items():
            await sandbox.write(name, text)
        return EpisodeSetup()

    async def grade(self, task: CodeTask, sandbox: Sandbox, backend: SandboxBackend, state: None = None) -> Grade:
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
        """Run the hidden tests on `files`: the module in a fresh sandbox, the tests outside it; also how the
        leaderboard re-grades."""
        if backend.name == "process":
            raise SandboxError("Code-v0 grading keeps the module under test away from the test driver, which the "
                               "unisolated `process` sandbox cannot do. Use sandbox='local' or sandbox='docker'.")
        tests = test_ids(task.tests)
        with tempfile.TemporaryDirectory(prefix="polar-code-grade-", dir=scratch_root()) as tmp:
            root = Path(tmp)
            shared, private = root / "shared", root / "driver"
            (private / "tests").mkdir(parents=True)
            shared.mkdir()
            root.chmod(0o711)  # the sandbox's uid reaches `shared` (to mount it) and nothing else here
            shared.chmod(0o755)
            private.chmod(0o700)
            for name in SUBJECT_FILES:
                shutil.copy(HERE / name, shared / name)
            for name in DRIVER_FILES:
                shutil.copy(HERE / name, private / name)
            for name, text in task.tests.items():
                (private / "tests" / name).write_text(text, encoding="utf-8")
            grader = await backend.start(SandboxSpec(mounts=(Mount(str(shared), SUBJECT_DIR),)))
            try:
                for name, text in files.items():
                    await grader.write(name, text)
                socket_path = str(shared / "driver.sock")
                verdicts, problem, tampered = await _drive(private, socket_path, list(task.files), tests, grader,
                                                            task.test_timeout_s or PER_TEST_S)
            finally:
                await grader.stop()
        results = [verdicts.get(i, (False, "no verdict", 0.0)) for i in range(len(tests))]
        passed = [ok for ok, _, _ in results]
        log = "\n".join([f"passed {sum(passed)}/{len(tests)}",
                         *(f"FAILED {file}::{name} ({seconds:.1f}s)\n{error}"
                           for (file, name), (ok, error, seconds) in zip(tests, results, strict=True) if not ok)])
        components = {"solved": float(bool(tests) and all(passed)),
                      "tests_passed_frac": sum(passed) / len(tests) if tests else 0.0}
        return Grade(components, log[-20_000:], {"files": files}, error=problem,
                     tampered=tampered and f"the module under test tampered with the grader's connection: {tampered}")


async def _drive(private: Path, socket_path: str, files: list[str], tests: list[tuple[str, str]],
                 grader: Sandbox, per_test_s: float,
                 ) -> tuple[dict[int, tuple[bool, str, float]], str | None, str | None]:
    """Run the test driver and launch a subject each time it asks: the verdicts, what broke grading itself, and the
    first sign that something wrote on the grader's socket what the subject's own code never sends."""
    errors = (private / "stderr").open("w+b")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-S", str(private / "driver.py"), cwd=private, env=CLEAN_ENV,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=errors, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None
    config = {"socket": socket_path, "files": files, "tests": tests, "import_s": IMPORT_S, "per_test_s": per_test_s,
              "connect_s": CONNECT_S}
    proc.stdin.write(json.dumps(config).encode() + b"\n")
    command = f"python3 -I {SUBJECT_DIR}/subject.py {SUBJECT_DIR}/{Path(socket_path).name} " \
              f"{shlex.quote(grader.spec.workdir)} {' '.join(map(shlex.quote, files))}"
    verdicts: dict[int, tuple[bool, str, float]] = {}
    tampered: list[str] = []
    subject: asyncio.Task | None = None

    async def launch(run: int, token: str) -> None:
        with contextlib.suppress(SandboxError):
            await grader.exec(f"{command} <<< {token}", timeout=CONNECT_S + IMPORT_S + per_test_s + 5)
        with contextlib.suppress(OSError):  # the driver may be gone already
            proc.stdin.write(json.dumps({"ended": run}).encode() + b"\n")

    async def follow() -> str | None:
        nonlocal subject
        while line := await proc.stdout.readline():
            message = json.loads(line)
            if "run" in message:
                await _cancel(subject)
                subject = asyncio.create_task(launch(int(message["run"]), str(message["token"])))
            elif "test" in message:
                verdicts[int(message["test"])] = (message["passed"] is True, str(message["error"]),
                                                  float(message["seconds"]))
                tampered.extend(map(str, message["tampered"]))
            elif message.get("done") is True:
                return None
        return "the test driver stopped before it was done"

    try:
        problem = await asyncio.wait_for(follow(), GRADE_TIMEOUT_S)
    except TimeoutError:
        problem = None  # tests without a verdict by now fail
    except (ValueError, KeyError, TypeError) as e:
        problem = f"the test driver printed something that is not a verdict: {e!r}"
    finally:
        await _cancel(subject)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        errors.seek(0)
        stderr = errors.read()[-4000:].decode(errors="replace")
        errors.close()
    return verdicts, problem and f"{problem}: {stderr}", tampered[0] if tampered else None


async def _cancel(task: asyncio.Task | None) -> None:
    """Stop a subject's command (the sandbox kills its processes) unless it already ended."""
    if task is not None and not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
