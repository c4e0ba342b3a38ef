"""polar/Terminal-v0: Harbor-format tasks (Terminal-Bench 2.0 and others) in a docker or local sandbox.

Setup makes the sandbox what the task's Dockerfile describes. In the docker sandbox the sandbox runs on the
image built from it (`sandbox/dockerfile/build.py`: on polar's offline base when the engine lacks the task's own,
cached by content). In the local sandbox the Dockerfile's steps are replayed on the host's system
(`sandbox/dockerfile/replay.py`), and a task that needs more than that (packages the host lacks) runs in docker only.
A task's own processes (`[metadata.polar] services`) are started last: they are the environment's.

Grading runs in the agent's own sandbox, as Harbor's verifier does, since the outcome may be a file the agent
left as much as a process it killed, but never in anything the agent controlled: by then the env has killed
every process the agent started (only the environment's survive) and opened a fresh shell from outside
(`Sandbox.reset_processes`). What the tests will execute is checked first (`tamper.py`: in docker the
container against its image; tampering is status `tampered`, reward 0). Then `/logs/verifier` is emptied, the
pristine `tests/` is written from outside into `/tests`, which the sandbox sees read-only (empty until then: the
agent never saw it; no program the tests run can rewrite it), and test.sh runs from the working directory
through absolute paths, as `env -i ... /bin/bash --noprofile --norc /tests/test.sh`, with the environment the
sandbox had after setup (never what the agent exported; no BASH_ENV), a fresh empty HOME, and Python told to
ignore user site-packages (`PYTHONNOUSERSITE`), under a supervisor that tells whether it ended by itself (killed or
stopped by the code it ran is tampering). Its reward file is read by the rule in `polar.tasks.harbor` (reward.json wins
over reward.txt); no reward file is a verifier error.

The artefact is what the agent changed since setup (`changes.py`): the files, taken after the process reset
and before the tests are copied in, and which of the task's own processes it ended. `regrade` sets the task up in a
fresh sandbox, puts those changes back through the sandbox's shell, and grades exactly as `grade` does. The task's
services start at a fixed pid (a multiple of 500), so a re-grade's setup makes the same processes with the same ids:
a task's tests may compare a pid the agent wrote down.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import json
import posixpath
import re
import secrets
import shlex
import shutil
import time
import warnings
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polar.cache import cache_dir, locked
from polar.dockerfile import final_user, parse, repository, stage_chain, stages
from polar.envs.sandbox.docker import DockerSandbox
from polar.envs.sandbox.dockerfile.build import SUBSTITUTES
from polar.envs.sandbox.dockerfile.replay import DockerOnly, Step, host_has_debs, plan, replay
from polar.envs.sandbox.images import PYTHON_IMAGE
from polar.envs.sandbox.shell import ShellSandbox, command_args, kill_quietly
from polar.envs.sandbox.site import host_python_version, install_site
from polar.envs.terminal.canary import Canary, place
from polar.envs.terminal.changes import (
    GRADING_DIRS,
    SNAPSHOT_CAP,
    Changes,
    Snapshot,
    TooLarge,
    apply,
    compare,
    decode,
    docker_snapshot,
    encode,
    local_snapshot,
    recorded,
    under,
)
from polar.envs.terminal.tamper import (
    command_words,
    docker_tampering,
    image_startup,
    local_shadows,
    local_startup,
    local_startup_shadows,
    module_shadows,
    script_python_path,
    sealed_chmods,
)
from polar.envs.terminal.toolbox import (
    INSTALL_INTO_HOME,
    TOOLBOX,
    apt_build_steps,
    apt_packages,
    needs_toolbox,
    prefetch,
    toolbox_dir,
)
from polar.envs.terminal.toolbox import PYTHON as TOOLBOX_PYTHON
from polar.envs.terminal.toolbox import verifier_env as toolbox_env
from polar.errors import SandboxError, SandboxUnsupported, VerifierError
from polar.protocols import EpisodeSetup, ExecResult, Grade, Mount, Sandbox, SandboxBackend, SandboxSpec
from polar.reward import RewardComponent, RewardSpec
from polar.tasks.harbor import SOLUTION_DIR, TESTS_DIR, VERIFIER_DIR, HarborTask, load_suite, read_reward

WRITABLE_DIRS = ("/logs", "/solution")
"""Harbor's fixed paths outside the working directory that the sandbox writes: verifier and agent logs, the
reference solution."""
SEALED_DIRS = (TESTS_DIR,)
"""Harbor's `/tests`: read-only inside the sandbox, filled from outside when grading starts (the agent never sees
the tests, and no program they run can rewrite them)."""
IMAGE_BACKENDS = ("docker",)
"""Backends whose sandbox runs on the task's image, so the Dockerfile needs no replay."""
_SKIP_ENV = {"PWD", "OLDPWD", "SHLVL", "_"}
_HOOKS = {"BASH_ENV", "ENV", "HOME", "PROMPT_COMMAND", "PYTHONSTARTUP"}
"""Variables that make a shell or Python run a file at start, or name HOME: the verifier never inherits them."""
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_REMOTE = r"(?!(?:\w+ at )?(127\.\d+\.\d+\.\d+|localhost|\[?::1\]?|0\.0\.0\.0)\b)"
"""A host that is not this machine: a refused connection to a local port is a service that is not running, not a
missing network."""
_NETWORK_FAILURE = re.compile(
    r"Could not resolve host[^\n]*|Temporary failure in name resolution|Temporary failure resolving[^\n]*|"
    rf"Name or service not known|Network is unreachable|Failed to connect to {_REMOTE}[^\n]*|"
    rf"Failed to establish a new connection|getaddrinfo failed|Could not connect to {_REMOTE}[^\n]*|No route to host|"
    r"\b(curl|wget|uvx?|pip3?): command not found|Network connectivity is disabled[^\n]*|"
    r"No matching distribution found for [^\n]*|No solution found when resolving[^\n]*|"
    r"because the network was disabled")
"""What curl, wget, pip, uv and apt print when there is no network (or no curl to fetch with), and uv and pip when
the verifier toolbox's wheelhouse lacks what they were asked for: a test.sh that hits one and writes 0 has not
tested anything (Harbor's tests often install uv or pytest with curl first)."""
_MISSING_PYTHON = re.compile(r"No interpreter found for ([^\n]+?) in (?:managed installations|virtual environments|"
                             r"search path|the search path)")
"""What uv prints when test.sh asks it for a CPython it has no copy of and may not download (`uvx -p 3.12`): the
toolbox serves one CPython (`toolbox.PYTHON`), and no other minor is to be had offline."""
_NETWORK_TOOLS = re.compile(r"^[^#\n]*(?<!\w)(curl|wget|apt-get|apt|apk|pip3?|uvx?|npm|npx|yarn|conda|"
                            r"git\s+clone|-m\s+pip|urlopen|requests\.get)(?!\w)", re.M)
"""How a test script reaches for the network itself. Only a script that does can fail for want of one: the agent's
programs that the tests run print what they like, so their output alone never makes a `verifier_error`."""
REWARD_FILES = ("reward.json", "reward.txt")
_GIT_OVERRIDES = {"core.fsmonitor": "false", "core.hooksPath": "/dev/null", "core.pager": "cat",
                  "core.editor": "true", "sequence.editor": "true", "core.sshCommand": "false",
                  "core.askPass": "false", "credential.helper": "", "gpg.program": "false", "diff.external": "",
                  "protocol.ext.allow": "never", "safe.directory": "*"}
"""git settings that run a program, given at the command-line level so they win over any repository's own
`.git/config` the agent wrote (the tests' `git status` runs no fsmonitor, hook, pager or editor of the agent's);
`safe.directory` lets the tests read a repository whoever owns it, as the task's author ran them."""
NO_CANARY = "unverified by a canary: none could be placed, so the tests ran once, in the agent's own sandbox"
"""The line of a grade's log (after the image's bases and the artefact's summary) that says the verifier could not
run twice: the admission report shows it and counts such tasks."""
UNCHANGED = ("canary: none needed: the artefact is empty, so the tests ran once, in a fresh sandbox "
             "of the task as set up")
"""An empty artefact: the fresh sandbox holds nothing of the agent's, so whatever the tests pay there is their own
verdict on the task as shipped, and a second run with a canary could only show the same (an episode that does
nothing, common early in training, is graded at the cost of one run)."""
_PAD_PIDS = ('read -r n < /proc/sys/kernel/ns_last_pid && t=$(( (n / 500 + 1) * 500 )) && '
             'while read -r n < /proc/sys/kernel/ns_last_pid && [ "$n" -lt "$t" ]; do ( : ); done; ')
"""Shell that uses up process ids (subshells, one at a time) up to the next multiple of 500, so what runs next gets
the same ids in every sandbox of the task (the engine's `docker exec` takes a varying few before setup)."""


_PLANS: weakref.WeakKeyDictionary[HarborTask, list[Step] | str] = weakref.WeakKeyDictionary()


def _local_plan(task: HarborTask) -> list[Step] | str:
    """The replay steps of the task's Dockerfile (computed once per task), or why there are none."""
    if task not in _PLANS:
        if task.dockerfile is None:
            _PLANS[task] = f"its environment is a prebuilt image ({task.docker_image}) with no Dockerfile to replay"
            return _PLANS[task]
        try:
            _PLANS[task] = plan(task.dockerfile, task.workdir, WRITABLE_DIRS)
        except DockerOnly as e:
            _PLANS[task] = str(e)
    return _PLANS[task]


TASK_SITE = "/opt/polar-task-site"
"""Where the local sandbox mounts what a task's Dockerfile pip-installs (its image would hold it)."""


PYTHON_ALIAS = "/opt/polar-python"
"""Where the local sandbox mounts a `bin/python` that is the host's python3, for a task on a `python:*` base (whose
image, and polar's docker stand-in for it, name python3 `python` too) on a host that has no `python`."""


def python_alias(task: HarborTask) -> Path | None:
    """The folder to mount at `PYTHON_ALIAS` for the task in the local sandbox, or None: its base is no `python:*`
    image, or the host has a `python` of its own."""
    if task.dockerfile is None or shutil.which("python", path=DEFAULT_PATH) or \
            (python3 := shutil.which("python3", path=DEFAULT_PATH)) is None:
        return None
    chain = stage_chain(stages(parse(task.dockerfile.read_text(), str(task.dockerfile))))
    if not chain or SUBSTITUTES.get(repository(chain[0].base)) != PYTHON_IMAGE:
        return None
    folder = cache_dir("python-alias") / hashlib.sha256(python3.encode()).hexdigest()[:16]
    if not (folder / "bin" / "python").is_symlink():
        with locked(folder.parent / f".{folder.name}.lock"):
            (folder / "bin").mkdir(parents=True, exist_ok=True)
            if not (folder / "bin" / "python").is_symlink():
                (folder / "bin" / "python").symlink_to(python3)
    return folder


def task_site(requirements: tuple[str, ...]) -> Path:
    """The site folder of `requirements` for the host's Python, installed once per machine."""
    version = host_python_version()
    key = hashlib.sha256(json.dumps([version, sorted(requirements)]).encode()).hexdigest()[:16]
    site = cache_dir("task-sites") / key
    if not site.is_dir():
        with locked(site.parent / f".{key}.lock"):
            if not site.is_dir():
                install_site(requirements, version, site, f"the Dockerfile's pip installs ({' '.join(requirements)})")
    return site


def local_blocker(task: HarborTask) -> str | None:
    """Why the task cannot run in the local sandbox (its task.toml's word, else what the replay finds), or None."""
    if task.docker_only:
        return f"its task.toml marks it docker-only: {task.docker_only}"
    found = _local_plan(task)
    if isinstance(found, str):
        return found
    if missing := host_has_debs(tuple(p.split("=")[0] for p in apt_packages(task.tests))):
        return (f"its tests install Debian packages this machine lacks ({', '.join(missing)}), which the local "
                "sandbox cannot install (the docker sandbox installs them when it builds the task's image)")
    return None


def _agent_places(task: HarborTask, environment: dict[str, str]) -> tuple[str, ...]:
    """Where the agent can write in the local sandbox besides the task's writable dirs."""
    return task.workdir, "/tmp", environment.get("HOME", "/home")


@dataclass
class _Setup:
    """What one episode's setup left, kept for its grading: the environment test.sh gets, the state the agent's
    changes are measured from, and what the task's services started ({(host pid, start ticks): (pid inside, command
    line as setup last saw it: a process that is still exec'ing shows its starter's)})."""

    environment: dict[str, str]
    baseline: Snapshot | None
    """None in a sandbox the tests are replayed in (`_replayed`): nothing is measured from it."""
    services: dict[tuple[int, int], tuple[int, list[str]]]


def _task_processes(sandbox: Sandbox) -> dict[tuple[int, int], tuple[int, list[str]]]:
    """The sandbox's processes but its shell's, read from this machine's /proc (nothing inside answers)."""
    if not isinstance(sandbox, ShellSandbox):
        return {}
    own, found = sandbox.session.own_pids(), {}
    for pid, start in sandbox.processes().items():
        try:
            with open(f"/proc/{pid}/status") as f:
                inside = next((line.split()[-1] for line in f if line.startswith("NSpid:")), "")
        except OSError:
            continue
        if (args := command_args(pid)) is None:
            continue
        if pid not in own and inside.isdigit():
            found[(pid, start)] = (int(inside), args)
    return found


async def _copy_tests(sandbox: Sandbox, tests: dict[str, bytes]) -> str | None:
    """Put `tests` in /tests through the sandbox's shell, as the user test.sh runs as, each executable as a sealed
    dir's are; what went wrong, if anything."""
    if (made := await _as_root(sandbox, f"mkdir -p {TESTS_DIR}", TESTS_DIR)).exit_code != 0:
        return f"could not make {TESTS_DIR}: {made.output[-2000:]}"
    try:
        for name, data in tests.items():
            await sandbox.write(f"{TESTS_DIR}/{name}", data)
    except SandboxError as e:
        return f"could not copy the tests to {TESTS_DIR}: {e}"
    done = await sandbox.exec(f"chmod -R a+rx {TESTS_DIR}", timeout=60)
    return None if done.exit_code == 0 else f"could not make the tests executable: {done.output[-2000:]}"


async def _as_root(sandbox: Sandbox, command: str, dirs: str) -> ExecResult:
    """Run polar's own set-up `command` as root where the sandbox's shell is an image's other USER (docker), then hand
    `dirs` to that user, so the agent and the tests write them as Harbor lets them."""
    if isinstance(sandbox, DockerSandbox):
        owned = f" && chown {sandbox.owner} {dirs}" if sandbox.owner else ""
        return await sandbox.exec_as_root(command + owned, timeout=60)
    return await sandbox.exec(command, timeout=60)


class TerminalFamily:
    """Task loading, sandbox setup and grading for polar/Terminal-v0."""

    env_id = "polar/Terminal-v0"
    version = 0
    default_suite = "terminal-mini"
    reward = RewardSpec(
        (RewardComponent("reward", 1.0, 1.0, "outcome",
                         "what the task's tests/test.sh wrote to /logs/verifier (reward.json, else reward.txt), "
                         "clipped to [0, 1]"),)
    )

    def load_tasks(self, suite: str | None) -> list[HarborTask]:
        return load_suite(suite)

    def sandbox_spec(self, task: HarborTask, backend: str | None = None) -> SandboxSpec:
        """The task's image or Dockerfile (each backend reads what it can use); `SandboxUnsupported` when `backend`
        is the local sandbox and the task runs in docker only."""
        if backend is not None and backend not in (*IMAGE_BACKENDS, "process") and \
                (blocker := local_blocker(task)) is not None:
            raise SandboxUnsupported(f"task {task.id} runs in the docker sandbox only: {blocker}")
        limits = {"memory_mb": task.memory_mb} if task.memory_mb else {}
        mounts, steps = (), ()
        if task.dockerfile is not None and (packages := apt_packages(task.tests)):
            text = task.dockerfile.read_text()
            steps = apt_build_steps(packages, final_user(stage_chain(stages(parse(text, str(task.dockerfile))))))
        if needs_toolbox(task.tests):
            if missing := prefetch(task.tests):
                warnings.warn(f"task {task.id}: no wheel of {', '.join(missing)} could be had for the verifier "
                              "toolbox: the tests that install them will fail offline", stacklevel=2)
            mounts = (Mount(str(toolbox_dir()), TOOLBOX),)
        env: dict[str, str] = {}
        if backend is not None and backend not in IMAGE_BACKENDS and not isinstance(found := _local_plan(task), str) \
                and (requirements := tuple(r for step in found for r in step.requirements)):
            mounts += (Mount(str(task_site(requirements)), TASK_SITE),)  # what the Dockerfile pip-installs
            env = {"PYTHONPATH": TASK_SITE, "PATH": f"{TASK_SITE}/bin:{DEFAULT_PATH}"}
        if backend is not None and backend not in IMAGE_BACKENDS and (alias := python_alias(task)) is not None:
            mounts += (Mount(str(alias), PYTHON_ALIAS),)
            env["PATH"] = f"{env.get('PATH', DEFAULT_PATH)}:{PYTHON_ALIAS}/bin"  # last: it adds `python`, shadows none
        return SandboxSpec(image=task.docker_image, dockerfile=str(task.dockerfile) if task.dockerfile else None,
                           workdir=task.workdir, writable_dirs=WRITABLE_DIRS, sealed_dirs=SEALED_DIRS,
                           mounts=mounts, build_steps=steps,
                           env=env, **limits)

    async def setup(self, task: HarborTask, sandbox: Sandbox) -> EpisodeSetup:
        return EpisodeSetup(state=await self._prepare(task, sandbox, measured=True))

    async def _prepare(self, task: HarborTask, sandbox: Sandbox, measured: bool) -> _Setup:
        """The task's sandbox made ready; `measured`: with the baseline snapshot the agent's changes are measured
        from (an agent's sandbox), not in a replay, where reading every changed path through the engine again only
        costs time (it was a third of a docker replay's)."""
        backend = sandbox.backend
        if backend == "process":
            raise SandboxError("Terminal-v0 tasks write /tests and /logs: the unisolated `process` sandbox would "
                               "write them on the host. Use sandbox='local' or sandbox='docker'.")
        if backend not in IMAGE_BACKENDS:
            if (blocker := local_blocker(task)) is not None:
                raise SandboxUnsupported(f"task {task.id} runs in the docker sandbox only: {blocker}")
            found = _local_plan(task)
            assert not isinstance(found, str)
            await replay(sandbox, found, task.agent_timeout_s, task.id)
        workdir = shlex.quote(task.workdir)
        made = await _as_root(sandbox, f"mkdir -p {VERIFIER_DIR} /logs/agent {SOLUTION_DIR}",
                              f"/logs {VERIFIER_DIR} /logs/agent {SOLUTION_DIR}")
        result = await sandbox.exec(f"cd {workdir} && env -0 | base64 -w0", timeout=60) if made.exit_code == 0 else made
        if result.exit_code != 0:
            raise SandboxError(f"task {task.id}: preparing the sandbox failed: {result.output[-2000:]}")
        entries = base64.b64decode(result.output).decode(errors="replace").split("\0")
        environment = {k: v for k, _, v in (e.partition("=") for e in entries if "=" in e) if k not in _SKIP_ENV}
        before = _task_processes(sandbox) if task.services is not None else None
        if task.services is not None:
            started = await sandbox.exec(f"{_PAD_PIDS}cd {workdir} && {task.services}", timeout=task.agent_timeout_s)
            if started.exit_code != 0:
                raise SandboxError(f"task {task.id}: its services (`[metadata.polar] services = {task.services!r}`) "
                                   f"did not start (exit code {started.exit_code}): {started.output[-2000:]}")
        baseline = await self._snapshot(task, sandbox, environment) if measured or task.services is not None else None
        if baseline is not None and task.services is not None:  # a replay too: the artefact goes in once they settle
            baseline = await self._settled(task, sandbox, environment, baseline)
        # after the snapshot, so that a service has had time to exec its own command line
        services = {} if before is None else {k: v for k, v in _task_processes(sandbox).items() if k not in before}
        return _Setup(environment, baseline if measured else None, services)

    async def _snapshot(self, task: HarborTask, sandbox: Sandbox, environment: dict[str, str],
                        base: Snapshot | None = None) -> Snapshot:
        """What the places the agent can change hold (docker: the container against its image, by the engine), with
        the content of what differs from `base` up to `SNAPSHOT_CAP`."""
        if isinstance(sandbox, DockerSandbox):
            skip = (*GRADING_DIRS, *(m.sandbox_path for m in sandbox.spec.mounts))
            return await asyncio.to_thread(docker_snapshot, sandbox.client, sandbox.container_id, skip, base,
                                           SNAPSHOT_CAP, sandbox.btrfs_root)
        return await local_snapshot(sandbox, (*_agent_places(task, environment), SOLUTION_DIR), base, SNAPSHOT_CAP)

    async def _settled(self, task: HarborTask, sandbox: Sandbox, environment: dict[str, str], baseline: Snapshot,
                       tries: int = 8) -> Snapshot:
        """The snapshot once the services have stopped changing files: a service's children open their logs after
        the start script has returned, and a baseline taken before that makes the service's own writes look like the
        agent's. A service that never stops writing gets the last snapshot after `tries` rounds."""
        for attempt in range(tries):
            await asyncio.sleep(0.05 * (attempt + 1))
            now = await self._snapshot(task, sandbox, environment)
            if (now.entries, now.deleted) == (baseline.entries, baseline.deleted):
                return baseline
            baseline = now
        return baseline

    async def _changes(self, task: HarborTask, sandbox: Sandbox, setup: _Setup) -> tuple[Changes, Snapshot | None]:
        """What the agent changed since setup (its processes must be dead): the episode's artefact, and the snapshot
        of the final state it was measured from (None when it was too large to keep)."""
        alive = _task_processes(sandbox) if setup.services else {}
        ended = sorted(identity for key, identity in setup.services.items() if key not in alive)
        if setup.baseline is None:
            raise SandboxError(f"task {task.id}: this sandbox's setup took no baseline to measure changes from")
        try:
            now = await self._snapshot(task, sandbox, setup.environment, setup.baseline)
        except TooLarge as e:
            return Changes(too_large=e.size), None
        return compare(setup.baseline, now, ended), now

    def verifier_env(self, task: HarborTask, setup: _Setup) -> dict[str, str]:
        """What test.sh runs with: the sandbox's environment after setup without start-up hooks, Python kept off the
        user's site-packages, then the task's own [verifier] env. Not PYTHONSAFEPATH: every program the tests run
        inherits it, and the agent's own code that they run (`python3 -m calc`, a script importing its siblings)
        needs its directory on sys.path; the working directory shadowing a test runner is checked instead.
        `GIT_TEMPLATE_DIR` empty: a repository the tests `git init` gets no template (git's template folder, which
        the agent could write, holds a config and attributes naming filters that run). `PYTHONPYCACHEPREFIX`, a
        folder no one has yet: Python reads and writes compiled modules there only, never in a `__pycache__` beside
        a source, where the agent's `.pyc` (with the source's time stamp and size) would be run for the source."""
        env = {k: v for k, v in setup.environment.items() if k not in _HOOKS and not k.startswith("BASH_FUNC_")
               and not k.startswith("GIT_CONFIG")}
        git = {"GIT_CONFIG_COUNT": str(len(_GIT_OVERRIDES)), "GIT_PAGER": "cat", "GIT_EDITOR": "true",
               "GIT_TERMINAL_PROMPT": "0"}
        for i, (key, value) in enumerate(_GIT_OVERRIDES.items()):
            git |= {f"GIT_CONFIG_KEY_{i}": key, f"GIT_CONFIG_VALUE_{i}": value}
        env = {"PATH": DEFAULT_PATH, **env, "PYTHONNOUSERSITE": "1", **git, "GIT_TEMPLATE_DIR": "",
               "PYTHONPYCACHEPREFIX": f"/tmp/polar-verifier-pycache.{secrets.token_hex(8)}"}
        if needs_toolbox(task.tests):
            env |= toolbox_env(env["PATH"])
        return {**env, **task.verifier_env}

    async def grade(self, task: HarborTask, sandbox: Sandbox, backend: SandboxBackend,
                    state: _Setup | None = None) -> Grade:
        """Record what the agent changed (the artefact) and check what the tests would read, then run the pristine
        tests/test.sh twice, each in a fresh sandbox made from the artefact, once with a must-fail canary
        (`canary.py`), and read the reward each wrote; once, with no canary, when the artefact is empty (`UNCHANGED`).
        Where no canary can be placed, the tests run once in the agent's own sandbox (which the env has reset: no
        process of the agent's is left, the shell is fresh), and the log says so."""
        if not isinstance(state, _Setup):
            raise SandboxError(f"task {task.id}: grade needs the state setup() returned for this sandbox")
        changes, final = await self._changes(task, sandbox, state)
        kinds = {**changes.specials, **await _reachable_specials(sandbox, changes)}
        canary, why, left = place(task.tests, task.workdir), None, ""
        if (specials := _special_files(kinds)) and isinstance(canary, Canary):
            left = (f"not in the snapshot the tests ran on (no artefact holds a special file, and no process of the "
                    f"episode outlives it): {', '.join(f'{p} ({kinds[p]})' for p in specials[:20])}\n")
        elif specials:
            why = (f"{specials[0]} is a {kinds[specials[0]]} (or a symbolic link to one), not a regular file: the "
                   "tests would block on it or read what no artefact can record (a re-grade would differ)")
        why = why or _links_into_grading(changes, state.baseline)
        if why:
            grade = Grade(self.reward.zeros(), f"the tests were not run: {why}", tampered=why)
        elif changes.too_large is not None and isinstance(canary, Canary):
            grade = Grade(self.reward.zeros(), "the tests were not run", error=(
                f"task {task.id}: {changes.summary()}: the verifier runs on a snapshot of the final state, and this "
                f"one is past the {SNAPSHOT_CAP >> 20} MiB a snapshot holds"))
        elif isinstance(canary, Canary) and not (changes.entries or changes.deleted or changes.ended):
            grade = await self._fresh_run(task, changes, backend, task.tests)
            grade.log = f"{left}{UNCHANGED}\n{grade.log}"
        elif isinstance(canary, Canary):
            grade = await self._changed_what_tests_run(task, sandbox, state, final, canaried=True) or \
                await self._two_runs(task, changes, backend, canary)
            grade.log = left + grade.log
        else:
            grade = await self._changed_what_tests_run(task, sandbox, state, final, canaried=False) or \
                await self._run_tests(task, sandbox, state, fresh_project_env=_planted_venv(task, changes))
            grade.log = f"{NO_CANARY}: {canary}\n{grade.log}"
        kept = recorded(changes)
        grade.artefact, grade.log = encode(kept), f"{kept.summary()}\n{grade.log}"
        if isinstance(sandbox, DockerSandbox):
            grade.log = sandbox.describe() + grade.log
        return grade

    async def _changed_what_tests_run(self, task: HarborTask, sandbox: Sandbox, setup: _Setup,
                                      final: Snapshot | None, canaried: bool) -> Grade | None:
        """A `tampered` grade when the agent changed what the tests would execute (`tamper.py`), checked once on the
        graded sandbox's final state before any run: each run's sandbox holds that state's files (the artefact),
        so checking every run's again found the same and cost each docker run a walk of the image (`docker diff`).
        `final`: the snapshot the artefact was measured from, whose engine diff is the container's as it is now.
        `canaried`: the runs carry a canary, which stands in for the rules on what is merely present."""
        env = self.verifier_env(task, setup)
        script = task.tests["test.sh"].decode(errors="replace")
        words = command_words(script)
        python_path = env.get("PYTHONPATH", "")
        tests_path = script_python_path(script, python_path, task.workdir)  # with the folders test.sh adds itself
        startup = None  # what Python's start-up or a cwd-first Python would import: with a canary, its run shows it
        if isinstance(sandbox, DockerSandbox):
            try:
                startup = None if canaried else await asyncio.to_thread(
                    image_startup, sandbox.client, sandbox.image, env["PATH"], tests_path)
            except SandboxError as e:
                return Grade(self.reward.zeros(), str(e), error=f"task {task.id}: {e}")
            found = await asyncio.to_thread(docker_tampering, sandbox.client, sandbox.container_id, env["PATH"], words,
                                            startup, tests_path, canaried, final.engine_diff if final else None,
                                            sandbox.btrfs_root)
        else:
            places = (*_agent_places(task, setup.environment), *WRITABLE_DIRS)
            found = await local_shadows(sandbox, env["PATH"], places)
            if not canaried:
                found += await local_startup_shadows(sandbox, env["PATH"], tests_path, places)
                startup = await local_startup(sandbox, env["PATH"], places)
        if not found and startup is not None:
            found += await module_shadows(sandbox, script, task.workdir, env["PATH"], python_path, startup.absent)
        if found:
            return Grade(self.reward.zeros(), "the tests were not run: the agent changed what they execute:\n" +
                         "\n".join(found), tampered="; ".join(found)[:2000])
        return None

    async def _two_runs(self, task: HarborTask, changes: Changes, backend: SandboxBackend, canary: Canary) -> Grade:
        """The plain run's grade, when the canary run, started alongside it in random order, paid less; `tampered`
        when it paid as much (the reward did not come from what the tests found)."""
        runs = [("plain", task.tests), ("canary", canary.tests)]
        secrets.SystemRandom().shuffle(runs)
        done = await asyncio.gather(*(self._fresh_run(task, changes, backend, tests) for _, tests in runs),
                                    return_exceptions=True)
        if failed := next((e for e in done if isinstance(e, BaseException)), None):
            raise failed
        plain, canaried = (next(g for (k, _), g in zip(runs, done, strict=True) if k == kind and isinstance(g, Grade))
                           for kind in ("plain", "canary"))
        paid, canary_paid = plain.reward(self.reward), canaried.reward(self.reward)
        said = (f"canary: {', '.join(canary.placed)} added in one of two runs on snapshots of the final state "
                f"(order: {' then '.join(k for k, _ in runs)}); the plain run paid {paid:g}, the canary run "
                f"{canary_paid:g}" + (f" ({canaried.tampered or canaried.error})"
                                      if canaried.tampered or canaried.error else ""))
        plain.log = f"{said}\n{plain.log}\n--- the canary run ---\n{canaried.log[-5_000:]}"
        if plain.tampered is None and canaried.tampered is not None:
            plain.tampered = f"in the canary run: {canaried.tampered}"
        elif plain.tampered is None and (0 < paid <= canary_paid if plain.error is None  # or, with no plain reward
                                         else canary_paid >= self.reward.max_total):  # (a file left empty), in full
            than = f"as much as the plain run ({paid:g})" if plain.error is None else \
                f"the most there is (the plain run: {plain.error})"
            plain.tampered = (f"the canary run paid {canary_paid:g}, {than}: a test that cannot pass "
                              f"({', '.join(canary.placed)}) was added and the reward did not drop, so it is not the "
                              "tests' verdict")
        return plain

    async def _fresh_run(self, task: HarborTask, changes: Changes, backend: SandboxBackend,
                         tests: dict[str, bytes]) -> Grade:
        """`tests` run in a fresh sandbox holding the artefact (`_replayed`), from a copy in /tests that test.sh may
        write beside, as Harbor's may: a rewrite by the code the tests run shows in the canary run, which the
        read-only bind of the single run stands in for, and nothing is read back from the copy."""
        try:
            async with self._replayed(task, changes, backend, writable_tests=True) as (sandbox, setup):
                return await self._run_tests(task, sandbox, setup, _planted_venv(task, changes), tests)
        except ValueError as e:
            return Grade(self.reward.zeros(), str(e), error=f"task {task.id}: {e}")

    @contextlib.asynccontextmanager
    async def _replayed(self, task: HarborTask, changes: Changes, backend: SandboxBackend, measured: bool = False,
                        writable_tests: bool = False) -> AsyncIterator[tuple[Sandbox, _Setup]]:
        """A fresh sandbox of the task, set up, with the task's processes the agent ended ended, the artefact put back
        and nothing it started alive: the final state, stopped on exit; `measured`: with a baseline taken before the
        artefact went in (a re-grade measures the changes again); `writable_tests`: /tests an ordinary folder, not
        sealed. `ValueError` when the artefact cannot be put back."""
        spec = self.sandbox_spec(task, backend.name)
        if writable_tests:
            spec = dataclasses.replace(spec, sealed_dirs=(), writable_dirs=(*spec.writable_dirs, TESTS_DIR))
        sandbox = await backend.start(spec)
        try:
            setup = await self._prepare(task, sandbox, measured)
            await sandbox.mark_processes()
            await self._end(sandbox, setup, changes.ended)
            await apply(sandbox, changes)
            await sandbox.reset_processes()
            yield sandbox, setup
        finally:
            await sandbox.stop()

    async def regrade(self, task: HarborTask, artefact: dict[str, Any], backend: SandboxBackend) -> Grade:
        """Set the task up in a fresh sandbox from `backend` holding the recorded artefact and grade it as `grade`
        does (tampering and the two runs included)."""
        changes = decode(artefact)
        if changes.too_large is not None:
            return Grade(self.reward.zeros(), changes.summary(), error=f"task {task.id}: {changes.summary()}")
        async with self._replayed(task, changes, backend, measured=True) as (sandbox, setup):
            return await self.grade(task, sandbox, backend, setup)

    async def _end(self, sandbox: Sandbox, setup: _Setup, ended: list[tuple[int, list[str]]],
                   wait_s: float = 5.0) -> None:
        """Kill the processes of the task's services that the artefact says were gone: the one with the same pid (the
        services start at a fixed pid, so it is the same process), else the next with that command line."""
        left = dict(setup.services)
        victims = []
        for pid, args in ended:
            key = next((k for k, v in left.items() if v[0] == pid), None) or \
                next((k for k, v in left.items() if v[1] == args), None)
            if key is None:
                raise ValueError(f"artefact ended names process {pid} `{' '.join(args)}`, which the task's services "
                                 "did not start")
            victims.append(key)
            del left[key]
        for pid, _ in victims:
            kill_quietly(pid)
        deadline = time.monotonic() + wait_s
        while any(key in _task_processes(sandbox) for key in victims) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    async def _run_tests(self, task: HarborTask, sandbox: Sandbox, setup: _Setup,
                         fresh_project_env: bool = False, tests: dict[str, bytes] | None = None) -> Grade:
        """Run the pristine tests (`tests`: the same with a canary added); with `fresh_project_env` (the agent changed
        the working directory's `.venv`) and the toolbox, uv's project commands use a fresh environment in the
        verifier's HOME instead."""
        env = self.verifier_env(task, setup)
        script = task.tests["test.sh"].decode(errors="replace")
        if changed := sandbox.changed_programs() if isinstance(sandbox, ShellSandbox) else []:
            return Grade(self.reward.zeros(), "the tests were not run: the agent changed what they execute:\n" +
                         "\n".join(changed), tampered="; ".join(changed)[:2000])
        if replaced := await _replaced_logs(sandbox):
            return Grade(self.reward.zeros(), f"the tests were not run: {replaced}", tampered=replaced)
        # the local sandbox's shell is the agent's user: a folder it made read-only (chmod 555) is opened up first
        opened = "" if isinstance(sandbox, DockerSandbox) else f"/bin/chmod -R u+rwx {VERIFIER_DIR} 2>/dev/null; "
        clear = (f"{opened}rm -rf {VERIFIER_DIR} 2>/dev/null; mkdir -p {VERIFIER_DIR} && "
                 f"[ -z \"$(find {VERIFIER_DIR} -mindepth 1 | head -1)\" ]")
        if (cleared := await _as_root(sandbox, clear, VERIFIER_DIR)).exit_code != 0:
            return Grade(self.reward.zeros(), cleared.output,
                         error=f"task {task.id}: could not empty {VERIFIER_DIR} for the tests")
        made = await _verifier_dir_owner(sandbox)
        tests = task.tests if tests is None else tests
        if TESTS_DIR not in sandbox.spec.sealed_dirs:  # a run on a copy of the final state (`_two_runs`)
            if problem := await _copy_tests(sandbox, tests):
                return Grade(self.reward.zeros(), problem, error=f"task {task.id}: {problem}")
        else:
            await sandbox.fill_sealed(TESTS_DIR, tests)
            if not (isinstance(sandbox, DockerSandbox) and sandbox.owner):  # test.sh runs as the owner of /tests
                for args in sealed_chmods(script, TESTS_DIR):  # its chmod inside fails: the bind is read-only
                    if complaint := await sandbox.chmod_sealed(TESTS_DIR, args):
                        warnings.warn(f"task {task.id}: test.sh's chmod {' '.join(args)}: {complaint}", stacklevel=2)
        assigned = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
        project = 'UV_PROJECT_ENVIRONMENT="$home/.venv" ' if fresh_project_env and needs_toolbox(task.tests) else ""
        command = (f"({SUPERVISED}home=$(/bin/mktemp -d /tmp/polar-verifier-home.XXXXXXXX) || exit 85; "
                   f"cd {shlex.quote(task.workdir)} 2>/dev/null || cd /; "
                   + (f"/usr/bin/env -i {assigned} HOME=\"$home\" {INSTALL_INTO_HOME}; " if needs_toolbox(task.tests)
                      else "")
                   + f"supervised /usr/bin/env -i {assigned} HOME=\"$home\" "
                   + f"{project}/bin/bash --noprofile --norc {TESTS_DIR}/test.sh; "
                   f"code=$?; /bin/rm -rf \"$home\"; {UNSUPERVISED}exit $code)")
        result = await sandbox.exec(command, timeout=task.verifier_timeout_s)
        log = f"$ bash {TESTS_DIR}/test.sh\n{result.output[-20_000:]}"
        if result.timed_out:
            return Grade(self.reward.zeros(), log, error=f"task {task.id}: tests/test.sh ran past its "
                                                         f"{task.verifier_timeout_s:g}s [verifier] timeout_sec")
        if result.exit_code == _FAULT:
            await sandbox.reset_processes()
            return Grade(self.reward.zeros(), f"reward 0: tests/test.sh died of a fault, so it wrote no verdict of its "
                                              f"own (what the reward file holds does not count)\n{log}")
        if result.exit_code != 0:
            await sandbox.reset_processes()
            why = _ENDINGS.get(result.exit_code, f"the shell that ran tests/test.sh ended with code "
                               f"{result.exit_code}: it was killed from inside (by the code the tests ran)")
            return Grade(self.reward.zeros(), log, tampered=f"{why}, so what the reward file holds is not the "
                                                            "tests' verdict")
        at_exit = await _reward_files(sandbox)
        await sandbox.reset_processes()  # nothing test.sh left running may write the reward once it has exited
        files = await _reward_files(sandbox)
        named = _named_rewards(task)
        if isinstance(sandbox, ShellSandbox) and (changed := sandbox.changed_programs()):
            return Grade(self.reward.zeros(), log, tampered="; ".join(changed)[:2000])
        if problem := _reward_tampering(named, at_exit, files) or \
                _unwritable_reward(made, await _verifier_listing(sandbox), result.output):
            return Grade(self.reward.zeros(), log, tampered=problem)
        try:
            reading = read_reward(*(files[n][1] if n in named else None for n in REWARD_FILES))
        except VerifierError as e:
            return Grade(self.reward.zeros(), log, error=f"task {task.id}: {e}")
        note = f" ({reading.note})" if reading.note else ""
        if reading.reward == 0.0 and needs_toolbox(task.tests) and (missing := _MISSING_PYTHON.search(result.output)):
            return Grade(self.reward.zeros(), log, error=(
                f"task {task.id}: tests/test.sh asked uv for {missing.group(1)}, which the verifier's offline toolbox "
                f"does not have (it serves CPython {TOOLBOX_PYTHON}, and uv cannot download another without the "
                "network), so its 0 says nothing about the agent's work. Give the task's image that Python, or "
                f"have test.sh ask for {TOOLBOX_PYTHON}"))
        if reading.reward == 0.0 and _NETWORK_TOOLS.search(script) and \
                (offline := _NETWORK_FAILURE.search(result.output)):
            return Grade(self.reward.zeros(), log, error=(
                f"task {task.id}: tests/test.sh could not set itself up: it reached for the network "
                f"({offline.group(0).strip()!r}), which the sandbox does not have, so its 0 says nothing about the "
                "agent's work. Make the tests' dependencies part of the task's image (its Dockerfile), not of test.sh"))
        return Grade({"reward": reading.reward}, f"reward {reading.reward:g} from {reading.source}{note}\n{log}")


_SUPERVISOR = ("my $p = fork; defined $p or exit 3; if (!$p) { exec {$ARGV[0]} @ARGV; exit 127 } "
               "waitpid($p, 2) == $p or exit 3; my $s = ${^CHILD_ERROR_NATIVE}; "
               "if (($s & 255) == 127) { kill 'KILL', $p; waitpid($p, 0); "
               "print STDERR \"\\npolar: tests/test.sh was stopped by signal \", $s >> 8, \"\\n\"; exit 87 } "
               "if ($s & 127) { print STDERR \"\\npolar: tests/test.sh was killed by signal \", $s & 127, \"\\n\"; "
               "exit((grep { $_ == ($s & 127) } 4, 5, 6, 7, 8, 11, 24, 25, 31) ? 89 : 86) } "
               "print STDERR \"\\npolar: tests/test.sh exited with code \", $s >> 8, \"\\n\"; exit 0")
"""Perl (perl-base is Essential on Debian and Ubuntu), builtins only (no module the agent could shadow in @INC), that
runs test.sh and tells from its raw wait status (`waitpid` with WUNTRACED, 2 on Linux) whether it ended by itself
(exit 0), was killed by a signal (86), died of a fault (89: SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS or
a resource limit's SIGXCPU, SIGXFSZ, which a crash of the agent's program in test.sh's own process gives) or was
stopped (87: it is killed then, rather than left to hang until the verifier's timeout). bash's own `$?` cannot: a
test.sh killed by SIGKILL and one that ran `exit 137` both give 137. Any other code means the supervisor itself was
killed."""
SUPERVISED = (f"supervised() {{ if [ -x /usr/bin/perl ]; then how=perl; /usr/bin/env -i /usr/bin/perl -f -e "
              f"{shlex.quote(_SUPERVISOR)} \"$@\"; else how=bash; \"$@\"; fi; }}; ")
"""A shell function that runs its command line under the supervisor where the image has perl (started with an empty
environment, so no PERL5LIB or PERL5OPT reaches it), else straight; `how` says which, decided once (a perl the tests'
code deletes meanwhile changes nothing)."""
UNSUPERVISED = ('[ "$how" = perl ] || { echo "polar: tests/test.sh exited with code $code"; '
                "if [ $code -gt 128 ]; then code=88; else code=0; fi; }; ")
"""Without perl, bash's `$?` past 128 is taken for a signal (an honest `exit 137` with it)."""
_ENDINGS = {85: "polar could not make the verifier's HOME in /tmp, which the agent left unwritable",
            86: "tests/test.sh was killed by a signal that polar did not send",
            87: "tests/test.sh was stopped by a signal (polar killed it rather than wait for the verifier's timeout)",
            88: "tests/test.sh ended with a code past 128, which bash also gives a script killed by a signal (the "
                "image has no perl to tell which)"}
"""What the grading command's exit code says about how test.sh ended; 0 is by itself, `_FAULT` a crash (a 0, no
tampering: the agent's code may crash honestly); any other is tampering."""
_FAULT = 89


async def _replaced_logs(sandbox: Sandbox) -> str | None:
    """Why /logs or /logs/verifier is no longer a directory of its own (a symlink, a file), read with the shell's own
    tests, or None: polar could not give the tests a fresh output folder there."""
    probe = (f'for d in /logs {VERIFIER_DIR}; do if [ -L "$d" ]; then echo "$d link"; '
             'elif [ -e "$d" ] && [ ! -d "$d" ]; then echo "$d file"; fi; done; true')
    found = (await sandbox.exec(probe, timeout=60)).output.split()
    if len(found) >= 2:
        return (f"{found[0]} is a {'symbolic link' if found[1] == 'link' else 'file'}, not the directory polar gives "
                "the tests for their output: the agent replaced it")
    return None


SOCKET_PLACES = ("/tmp", "/run", "/var/run")
"""Where a socket a daemon left behind is no deliverable the tests read, and no tampering."""


def _special_files(kinds: dict[str, str]) -> list[str]:
    """The special files the agent made or links to, by path (a FIFO or device node anywhere, a socket outside
    `SOCKET_PLACES`): a test that opens a FIFO blocks until the verifier's timeout, and none of them goes into the
    artefact, so a re-grade would see another state."""
    return sorted(p for p, kind in kinds.items()
                  if kind != "socket" or not any(under(p, place) for place in SOCKET_PLACES))


UNRECORDED_PLACES = ("/logs", "/dev/shm")
"""Places the agent can write that the artefact does not record (grading's /logs, the shared-memory tmpfs): the
tests may still read them, through a symlink of the agent's."""


async def _reachable_specials(sandbox: Sandbox, changes: Changes) -> dict[str, str]:
    """{path: kind} of the special files in `UNRECORDED_PLACES` and of the agent's symlinks whose target is one (a
    deliverable linked to a FIFO in /logs/agent), read with the shell's own tests, which follow links."""
    links = [p for p, e in changes.entries.items() if e.kind == "symlink"]
    probe = ("shopt -s globstar dotglob nullglob; for p in " + " ".join(f"{d}/**" for d in UNRECORDED_PLACES) + " "
             + " ".join(map(shlex.quote, links)) + '; do if [ -p "$p" ]; then k=fifo; elif [ -S "$p" ]; then '
             'k=socket; elif [ -b "$p" ] || [ -c "$p" ]; then k=device; else continue; fi; printf \'%s %s\\0\' '
             '"$k" "$p"; done; true')
    found = (await sandbox.exec(f"/bin/bash --noprofile --norc -c {shlex.quote(probe)}", timeout=60)).output
    return {path: kind for kind, _, path in (item.partition(" ") for item in found.split("\0"))
            if kind in ("fifo", "socket", "device") and path}


GRADING_READS = (TESTS_DIR, VERIFIER_DIR, "/proc", "/dev/fd")
"""What a symlink of the agent's must not lead into: the tests and the verifier's output (filled or written only at
grading: a link there reads the answer key), and the kernel's links to a process's files (whatever they are then)."""


def _links_into_grading(changes: Changes, baseline: Snapshot) -> str | None:
    """Why a symlink the agent left leads into `GRADING_READS` (resolved through every symlink the snapshots know),
    or None."""
    links = {p: e.digest for p, e in (*baseline.entries.items(), *changes.entries.items()) if e.kind == "symlink"}
    for path in sorted(p for p, e in changes.entries.items() if e.kind == "symlink"):
        resolved = _resolve(path, links)
        if where := next((d for d in GRADING_READS if under(resolved, d)), None):
            return (f"{path} is a symbolic link to {links[path]}, which leads to {resolved}, in {where}: at grading it "
                    "reads the verifier's own files, not the agent's work")
    return None


_PROC_ROOT = re.compile(r"/proc/(self|thread-self|\d+)(/task/\d+)?/root")
"""The kernel's link to a process's root: `/` in the sandbox."""


def _resolve(path: str, links: dict[str, str], hops: int = 40) -> str:
    """`path` with every symlink of `links` in it followed, as the kernel would (`..` after a link's target)."""
    parts, done = [p for p in path.split("/") if p], ""
    while parts:
        part = parts.pop(0)
        if part == "..":
            done = done.rsplit("/", 1)[0]
            continue
        here = f"{done}/{part}" if part != "." else done
        target = "/" if _PROC_ROOT.fullmatch(here) else links.get(here)
        if target is not None and hops > 0:
            hops -= 1
            parts = [p for p in target.split("/") if p] + parts
            done = "" if target.startswith("/") else done
            continue
        done = here
    return done or "/"


def _planted_venv(task: HarborTask, changes: Changes) -> bool:
    """Whether the agent changed the working directory's `.venv`, uv's project environment, which the tests' `uv run`
    would reuse (or the changes are too large to tell)."""
    venv = posixpath.join(task.workdir, ".venv")
    return changes.too_large is not None or any(under(p, venv) for p in (*changes.entries, *changes.deleted))


def _named_rewards(task: HarborTask) -> tuple[str, ...]:
    """The reward files the task's tests name (any file of tests/, a helper that test.sh runs included); both, as
    Harbor reads them, when they name neither (a path built at run time)."""
    named = tuple(n for n in REWARD_FILES if any(n.encode() in data for data in task.tests.values()))
    return named or REWARD_FILES


async def _reward_files(sandbox: Sandbox) -> dict[str, tuple[str, bytes | None, str]]:
    """{name: (kind, bytes of a regular file, its inode change time)} of each reward file in /logs/verifier; the kind
    read with the shell's own tests (`missing`, `file`, `link`, `other`), not with a program the agent could have
    replaced, the change time by find (a grading tool the tamper checks cover). The change time, which no process can
    set back, tells a file rewritten with the same bytes (a loop writing 1 over and over) from one left alone."""
    probe = "; ".join(f'p={VERIFIER_DIR}/{n}; if [ -L "$p" ]; then echo link; elif [ -f "$p" ]; then '
                      f'echo "file:$(/usr/bin/find "$p" -maxdepth 0 -printf %C@)"; elif [ -e "$p" ]; then echo other; '
                      f'else echo missing; fi' for n in REWARD_FILES)
    kinds = (await sandbox.exec(probe, timeout=60)).output.split()
    if len(kinds) != len(REWARD_FILES):
        raise SandboxError(f"could not tell what {VERIFIER_DIR} holds: {' '.join(kinds)[:500]}")
    found = {}
    for name, said in zip(REWARD_FILES, kinds, strict=True):
        kind, _, changed_at = said.partition(":")
        data = None
        if kind == "file":
            try:
                data = await sandbox.read(f"{VERIFIER_DIR}/{name}")
            except FileNotFoundError:
                kind = "missing"
        found[name] = (kind, data, changed_at)
    return found


async def _verifier_listing(sandbox: Sandbox) -> dict[str, tuple[int, int]]:
    """{name: (owner uid, permission bits)} of /logs/verifier (as ".") and what it holds, by the image's find (one of
    the grader's tools, which the tamper check covers)."""
    listed = await sandbox.exec(f"/usr/bin/find {VERIFIER_DIR} -maxdepth 1 -printf '%U %m %P\\n'", timeout=60)
    found = {}
    for line in listed.output.splitlines():
        uid, mode, name = (line.split(" ", 2) + ["", ""])[:3]
        if uid.isdigit() and re.fullmatch(r"[0-7]+", mode):
            found[name or "."] = (int(uid), int(mode, 8))
    return found


async def _verifier_dir_owner(sandbox: Sandbox) -> int | None:
    """The owner of the freshly made /logs/verifier: the user test.sh writes its reward as."""
    return (await _verifier_listing(sandbox)).get(".", (None, 0))[0]


_FAILED_REWARD_WRITE = re.compile(rf"^{re.escape(TESTS_DIR)}/[^:\n]+: line \d+: ([^:\n]*reward\.(?:json|txt)): "
                                  r"([^\n]+)$", re.MULTILINE)
"""bash's own error when a redirection of test.sh (or a script of tests/ it runs) cannot open its reward file."""


def _unwritable_reward(owner: int | None, listing: dict[str, tuple[int, int]], output: str) -> str | None:
    """Why the tests could not have written their own reward: /logs/verifier or a reward file in it no longer
    owned by the user test.sh runs as, or no longer writable by its owner (the agent's code, run by the tests,
    wrote a 1 and made it read-only, so test.sh's own `echo 0 >` failed), or bash's error that a redirection of
    test.sh to a reward file failed."""
    for name in (".", *REWARD_FILES):
        if name not in listing:
            continue
        uid, mode = listing[name]
        what = VERIFIER_DIR if name == "." else f"{VERIFIER_DIR}/{name}"
        needed = 0o300 if name == "." else 0o200
        if (owner is not None and uid != owner) or mode & needed != needed:
            return (f"{what} is owned by uid {uid} with mode {mode:o} at the tests' end: the verifier's user "
                    f"(uid {owner}) could not write through it, so the reward is not the tests' own")
    if failed := _FAILED_REWARD_WRITE.search(output):
        return (f"test.sh could not write its reward ({failed.group(1)}: {failed.group(2).strip()}): what the file "
                "holds is not the tests' verdict")
    return None


def _reward_tampering(named: tuple[str, ...], at_exit: dict, swept: dict) -> str | None:
    """Why the reward files are not the verifier's own: one the tests never name, one that is not a regular file,
    or one that changed, or was written again, after test.sh exited (a process it left behind, killed since, wrote
    it)."""
    for name, (kind, _, _) in swept.items():
        path = f"{VERIFIER_DIR}/{name}"
        if kind != "missing" and name not in named:
            return (f"{path} was written, but the task's tests never name it: something other than the verifier "
                    f"wrote it (they write {' and '.join(named)})")
        if kind in ("link", "other"):
            return f"{path} is a {'symbolic link' if kind == 'link' else 'directory or device'}, not a regular file"
    if changed := [n for n in REWARD_FILES if at_exit[n] != swept[n]]:
        return (f"{VERIFIER_DIR}/{changed[0]} changed after tests/test.sh exited: a process the tests left running "
                "wrote it")
    return None
