"""The contracts, one screen each: Sandbox, Task, Harness, EnvFamily (with its grading contract), Policy.

An episode is a task set up in a sandbox, a harness driving an agent in it, and a verifier grading what the
agent left behind. `polar.envs.polar_env.PolarEnv` composes them; everything else implements one of these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from polar.reward import RewardSpec
from polar.types import ModelReply, ModelRequest

# --- sandbox -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mount:
    host_path: str
    sandbox_path: str
    read_only: bool = True


@dataclass(frozen=True)
class SandboxSpec:
    """What a sandbox must provide. Limits apply to every command run inside it."""

    image: str | None = None
    """Container image (docker, kubernetes); the local backend shares the host's read-only system."""
    workdir: str = "/workspace"
    """The writable per-episode directory; commands start here."""
    env: dict[str, str] = field(default_factory=dict)
    mounts: tuple[Mount, ...] = ()
    memory_mb: int | None = 4096
    """Address-space limit per process; None for no limit."""
    max_processes: int = 256
    output_limit_bytes: int = 1 << 20
    """Output kept per command; a command that prints more is stopped."""
    command_timeout_s: float = 120.0
    """Default per-command timeout; the whole process tree of a command that overruns is killed."""
    dockerfile: str | None = None
    """A Dockerfile on this machine (its folder is the build context): container backends run the sandbox on an
    image built from it, cached by content, unless the engine already has `image`. The local backend ignores it."""
    build_steps: tuple[str, ...] = ()
    """Dockerfile instructions appended to `dockerfile`'s build: what a task's own scripts would fetch online that
    the sandbox, which has no network, needs installed already (Terminal-v0: the Debian packages its tests install)."""
    writable_dirs: tuple[str, ...] = ()
    """Absolute paths outside the workdir that commands may write (a Harbor task's `/tests`, `/logs`). The local
    backend binds a fresh empty directory at each; a container's own file system is writable already."""
    sealed_dirs: tuple[str, ...] = ()
    """Absolute paths that commands may read and never write: each a read-only bind of a fresh host folder that
    polar fills from outside (`ShellSandbox.fill_sealed`). Harbor's `/tests`: no program the tests run (the agent's
    among them) can rewrite a test file while they run, whatever rights it has."""
    disk_mb: int | None = 8192
    """Cap on what the sandbox may write (local: its workspace, /tmp, HOME and writable dirs; docker: the
    container's writable layer): past it a write fails with EDQUOT and the host keeps its space. 8 GiB holds a
    SWE-bench repository with its build and test artefacts several times over. None for no cap; where the
    machine cannot cap (see `polar.envs.sandbox.disk`), polar warns once and runs uncapped."""
    cpus: float | None = 1.0
    """CPU time the sandbox's processes may use together, in CPUs (cgroup CPU bandwidth). One CPU, what Harbor
    tasks declare by default: an episode gets no more compute on a big node than on a small one, and a busy loop
    cannot starve the episodes beside it; a task that builds in parallel asks for more. None for no cap."""


@dataclass(frozen=True)
class ExecResult:
    output: str
    """stdout and stderr, interleaved as the command wrote them."""
    exit_code: int
    timed_out: bool = False
    truncated: bool = False
    duration_s: float = 0.0


@runtime_checkable
class Sandbox(Protocol):
    """A running, isolated place to execute commands. Shell state (cwd, variables) persists between calls."""

    spec: SandboxSpec
    backend: str
    """Which backend runs it (`local`, `docker`, `process`): families that set up per backend read it."""

    async def exec(self, command: str, timeout: float | None = None) -> ExecResult: ...

    async def write(self, path: str, data: bytes | str) -> None: ...

    async def read(self, path: str) -> bytes: ...

    async def mark_processes(self) -> None:
        """Remember the processes running now: the task's services, started by its setup, which
        `reset_processes` keeps. The env calls it right after the family's setup, before the agent starts."""

    async def reset_processes(self) -> None:
        """Kill every process started since the mark, the shell that ran `exec` included, until none is left (a
        fork bomb too), then open a new shell from outside the sandbox with the spec's clean environment. Files
        stay. The env calls it after the harness stopped and before grading, so nothing the agent started runs
        while it is graded. `SandboxError` when the backend cannot do that soundly, saying why."""

    async def stop(self) -> None:
        """Kill every process of the sandbox and remove its workspace. Safe to call twice."""


class SandboxBackend(Protocol):
    name: str

    async def start(self, spec: SandboxSpec) -> Sandbox: ...


# --- tasks ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteFile:
    """One step of a reference solution: write this file (path relative to the workdir)."""

    path: str
    content: str


@dataclass(frozen=True)
class RunCommand:
    """One step of a reference solution: run this shell command in the workdir."""

    command: str


@dataclass(frozen=True)
class CallTool:
    """One step of a reference solution: call a tool the env provides for the episode (a browser action).

    `target`, when set, names the element the call acts on by its ARIA role and accessible name (and `nth` among
    equals, from 0); the oracle resolves it to the `ref` the latest page snapshot gave that element, since refs
    are only known once the page is seen."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    target: dict[str, Any] | None = None


SolutionStep = WriteFile | RunCommand | CallTool


class Task(Protocol):
    id: str
    instruction: str
    """What the agent is asked to do, as the harness passes it on."""

    def reference_solution(self) -> list[SolutionStep]:
        """The steps that solve the task; the oracle policy replays them through the harness's tools."""
        ...


# --- harness -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HarnessExit:
    """The harness has finished: `error` is set when it crashed rather than finished."""

    final_answer: str | None = None
    error: str | None = None


class HarnessRun(Protocol):
    """One harness process (or in-process agent) driving one episode."""

    async def advance(self, reply: ModelReply | None) -> ModelRequest | HarnessExit:
        """Answer the pending model call (None at the start) and wait for the next call or the exit."""
        ...

    async def stop(self) -> None: ...


@dataclass(frozen=True)
class ToolOutput:
    """What one env-provided tool call returns: text, an optional PNG, and whether the call failed."""

    text: str
    image_png: bytes | None = None
    is_error: bool = False


@runtime_checkable
class ToolSet(Protocol):
    """Tools the env itself provides for one episode (a browser). The built-in harness offers them as function
    tools; external harnesses reach them over MCP, served by the gateway in the harness's session."""

    specs: list[dict[str, Any]]
    """OpenAI function tools."""
    exclusive: bool
    """The task is done with these tools alone: the built-in harness offers them instead of its shell tools."""

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        """Run one tool. A failed call is an error output (`is_error`), not an exception."""
        ...

    async def aclose(self) -> None: ...


class Harness(Protocol):
    name: str
    version: str

    def sandbox_mounts(self) -> tuple[Mount, ...]:
        """What the sandbox must mount for this harness (its install, the gateway socket)."""
        ...

    async def launch(self, task: Task, sandbox: Sandbox, tools: ToolSet | None = None) -> HarnessRun:
        """Start the agent on `task` in `sandbox`, with the env's `tools` for this episode, if it has any."""
        ...


# --- env family: what a family loads, sets up and grades -----------------------------------------------


@dataclass
class Grade:
    components: dict[str, float]
    log: str = ""
    artefact: dict[str, Any] | None = None
    """What was graded, recorded in the trace: `regrade` replays it for the leaderboard."""
    error: str | None = None
    """Set when grading itself failed: the episode gets status `verifier_error` and reward 0."""
    tampered: str | None = None
    """Set when the grader found the agent changed what grading executes (a binary, a test file, the verifier's
    output): the episode gets status `tampered` and reward 0, whatever the tests said."""

    def reward(self, spec: RewardSpec) -> float:
        """The scalar this grade earns under `spec`: 0 when grading failed or found tampering."""
        return 0.0 if self.error is not None or self.tampered is not None else spec.score(self.components)


@dataclass
class EpisodeSetup:
    """What `EnvFamily.setup` returns: the family keeps nothing per episode, so what grading needs travels here."""

    tools: ToolSet | None = None
    """The tools the env provides to the harness (Web-v0's browser); None when the sandbox's shell is all."""
    state: Any = None
    """The family's own record of the episode (its baseline, its app), handed back to `grade` unchanged."""


@dataclass
class Admission:
    """One task's admission (`polar tasks admit`), the one result type every family's checks return."""

    task_id: str
    reasons: list[str] = field(default_factory=list)
    """Why the task is rejected: each check that failed, in words. Empty when it is admitted."""
    skipped: str | None = None
    """Why the task was not run in this sandbox (a docker-only task in the local one): neither admitted nor
    rejected."""
    outcomes: dict[str, str] = field(default_factory=dict)
    """What each check saw, by check (`oracle`, `no-op`; SWE-v0: `gold`, `empty`, each sabotage): the reward and
    status, and for a Terminal task in docker what its image was built on."""
    seconds: float = 0.0

    @property
    def admitted(self) -> bool:
        return self.skipped is None and not self.reasons


@runtime_checkable
class EnvFamily(Protocol):
    """Everything one env family is (Code, SWE, Terminal, Web); `PolarEnv` composes it with a sandbox and a harness.

    The grading contract, the same for every family: PolarEnv stops the harness and kills every process the agent
    started before it calls `grade`, so nothing of the agent runs while a grader does. `grade` takes the artefact
    (a diff, named files, the app's server-side state) from the agent's sandbox and decides it in a process tree
    the agent never controlled, on pristine tests, with a clean environment; a verdict that travels on a channel
    the agent's code could write is a bug. `regrade` decides a recorded artefact the same way from nothing but the
    task, so the leaderboard's re-grade and the live grade agree.
    """

    env_id: str
    version: int
    default_suite: str
    reward: RewardSpec

    def load_tasks(self, suite: str | None) -> Sequence[Task]:
        """The tasks of a bundled suite (None: `default_suite`) or of a user's folder or file."""
        ...

    def sandbox_spec(self, task: Any, backend: str | None = None) -> SandboxSpec:
        """The sandbox the agent works in for `task` on the named backend (an image on docker, mounts locally)."""
        ...

    async def setup(self, task: Any, sandbox: Sandbox) -> EpisodeSetup:
        """Make `sandbox` the task's starting state; return the episode's tools and the state `grade` needs."""
        ...

    async def grade(self, task: Any, sandbox: Sandbox, backend: SandboxBackend, state: Any = None) -> Grade:
        """Grade what the agent left in `sandbox` (its processes are dead by now), with `state` as `setup` returned
        it, starting any fresh grading sandbox from `backend`."""
        ...

    async def regrade(self, task: Any, artefact: dict[str, Any], backend: SandboxBackend) -> Grade:
        """Grade a recorded artefact again (the leaderboard); raise ValueError when it is not this family's shape."""
        ...


# --- policy --------------------------------------------------------------------------------------------


class Policy(Protocol):
    """Anything that answers a model request. `task` is passed so an oracle can read the reference."""

    name: str
    model: str | None

    def __call__(self, request: ModelRequest, task: Task | None = None) -> ModelReply: ...
