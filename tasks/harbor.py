"""Harbor's task format (Terminal-Bench 2.0 and other Harbor datasets) and the bundled `terminal-mini` suite.

A task is a directory:

    <task-id>/
      instruction.md          what the agent is told, verbatim
      task.toml               [metadata], [verifier] timeout_sec/env, [agent] timeout_sec, [environment]
                              build_timeout_sec/docker_image/cpus/memory_mb/..., [solution] env
      environment/Dockerfile  the sandbox (its folder is the build context); or [environment].docker_image
      tests/test.sh           the verifier: run after the agent, from the working directory, with tests/ at
                              /tests; it writes /logs/verifier/reward.txt (one number) or reward.json
      solution/solve.sh       the reference solution (optional), run from /solution

Keys polar does not use are accepted and ignored, as Harbor ignores them. `[verifier] timeout_sec` bounds the
test run and `[agent] timeout_sec` each setup step and the reference solution; the episode itself is bounded
by the env's `time_limit_s`. polar reads two keys of its own: `[metadata.polar] docker_only = "<why>"`: the
task cannot run in the local sandbox (which replays the Dockerfile's steps on the host's system instead of
building it), and admission says why it skips it there; and `[metadata.polar] services = "<command>"`: what
the environment runs once it is set up to start the task's own processes (a queue's workers), from the
working directory. They outlive the agent: before grading every process the agent started is killed, and
only what setup started runs on. A service the tests need but the agent writes is started by test.sh.

**Which reward file wins.** When the test writes both files, `reward.json` wins and `reward.txt` is ignored,
as in Harbor's current verifier (which reads `reward.json` first; earlier releases read `reward.txt` first, so
a test that writes both should write the same reward to each). The outcome read from `reward.json` is its
`reward` key, or its only value when it holds exactly one; any other shape is a verifier error. The outcome
is clipped to [0, 1]. A test that writes neither file, or a file that does not parse, is a verifier error
(status `verifier_error`, the test's output kept in the trace), never a silent 0.
"""

from __future__ import annotations

import base64
import json
import math
import posixpath
import re
import shlex
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from polar.dockerfile import Stage, assignments, base_workdir, parse, stage_chain, stages, substitute
from polar.errors import TaskFormatError, UnknownNameError, VerifierError
from polar.protocols import RunCommand, SolutionStep, WriteFile
from polar.tasks.folders import load_folders

BUNDLED = Path(__file__).with_name("terminal")
SUITES = {"terminal-mini": BUNDLED}
TESTS_DIR, SOLUTION_DIR, VERIFIER_DIR = "/tests", "/solution", "/logs/verifier"
DEFAULT_WORKDIR = "/app"
"""The working directory of a Dockerfile without WORKDIR: polar needs a writable one, which `/` is not locally."""
VERIFIER_TIMEOUT_S = 600.0
AGENT_TIMEOUT_S = 600.0
OLD_LAYOUT_FILE = "task.yaml"
"""What marks a task in the older Terminal-Bench layout, which `polar tasks convert` rewrites (tasks/convert.py)."""


@dataclass(frozen=True, eq=False)
class HarborTask:
    """One Harbor task, loaded; compared and hashed by identity."""

    id: str
    """The directory's name."""
    path: Path
    instruction: str
    metadata: dict[str, Any]
    tests: dict[str, bytes]
    """tests/ by relative path; copied to /tests only when grading."""
    solution: dict[str, bytes]
    """solution/ by relative path (empty when the task has none)."""
    dockerfile: Path | None
    docker_image: str | None
    """[environment].docker_image: a prebuilt image, used when the engine has it."""
    workdir: str
    verifier_timeout_s: float = VERIFIER_TIMEOUT_S
    agent_timeout_s: float = AGENT_TIMEOUT_S
    verifier_env: dict[str, str] = field(default_factory=dict)
    solution_env: dict[str, str] = field(default_factory=dict)
    memory_mb: int | None = None
    docker_only: str | None = None
    """Why the task cannot run in the local sandbox, as its task.toml says; None when it does not say."""
    services: str | None = None
    """The command that starts the task's own processes once the sandbox is set up (`[metadata.polar] services`)."""

    def reference_solution(self) -> list[SolutionStep]:
        """Write solution/ to /solution, then run `bash /solution/solve.sh` from the working directory."""
        if "solve.sh" not in self.solution:
            raise TaskFormatError(f"task {self.id}: no solution/solve.sh, so it has no reference solution")
        steps: list[SolutionStep] = []
        for rel, data in sorted(self.solution.items()):
            target = f"{SOLUTION_DIR}/{rel}"
            try:
                steps.append(WriteFile(target, data.decode()))
            except UnicodeDecodeError:  # a binary file travels as base64 through the shell
                folder, encoded = shlex.quote(posixpath.dirname(target)), base64.b64encode(data).decode()
                write = f"mkdir -p {folder} && printf %s {encoded} | base64 -d > {shlex.quote(target)}"
                steps.append(RunCommand(write))
        env = "".join(f"{k}={shlex.quote(v)} " for k, v in self.solution_env.items())
        steps.append(RunCommand(f"cd {shlex.quote(self.workdir)} && {env}bash {SOLUTION_DIR}/solve.sh"))
        return steps


def _table(config: dict, key: str, where: Path) -> dict:
    value = config.get(key, {})
    if not isinstance(value, dict):
        raise TaskFormatError(f"{where}: [{key}] must be a table, got {type(value).__name__}")
    return value


def _number(table: dict, key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise TaskFormatError(f"{where}: {key} must be a positive number of seconds, got {value!r}")
    return float(value)


def _strings(table: dict, key: str, where: str) -> dict[str, str]:
    value = table.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise TaskFormatError(f"{where}: {key} must be a table of strings")
    return dict(value)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def load_task(directory: Path) -> HarborTask:
    """Load one task directory. A missing file or a malformed task.toml raises `TaskFormatError` naming the
    task and what is wrong; a Dockerfile is parsed here, so its errors surface at load time too."""
    directory = Path(directory)
    name = directory.name

    def missing(what: str) -> TaskFormatError:
        return TaskFormatError(f"task {name} ({directory}): missing {what}")

    toml_path = directory / "task.toml"
    if not toml_path.is_file():
        if (directory / OLD_LAYOUT_FILE).is_file():
            raise TaskFormatError(f"task {name} ({directory}): it is in the older Terminal-Bench layout "
                                  f"({OLD_LAYOUT_FILE}, run-tests.sh); convert it with `polar tasks convert SRC DEST`")
        raise missing("task.toml")
    try:
        config = tomllib.loads(toml_path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise TaskFormatError(f"task {name}: {toml_path} is not valid TOML: {e}") from None
    if not (directory / "instruction.md").is_file():
        raise missing("instruction.md (what the agent is told)")
    if not (directory / "tests" / "test.sh").is_file():
        raise missing("tests/test.sh (the verifier, which writes /logs/verifier/reward.txt or reward.json)")
    metadata, verifier, agent = (_table(config, k, toml_path) for k in ("metadata", "verifier", "agent"))
    environment, solution = _table(config, "environment", toml_path), _table(config, "solution", toml_path)
    where = f"task {name}: {toml_path}"
    docker_image = environment.get("docker_image")
    if docker_image is not None and not isinstance(docker_image, str):
        raise TaskFormatError(f"{where}: [environment].docker_image must be a string")
    dockerfile = directory / "environment" / "Dockerfile"
    if not dockerfile.is_file():
        if docker_image is None:
            raise missing("environment/Dockerfile (or [environment].docker_image in task.toml)")
        dockerfile = None
    memory = environment.get("memory_mb")
    if memory is not None and (isinstance(memory, bool) or not isinstance(memory, int) or memory <= 0):
        raise TaskFormatError(f"{where}: [environment].memory_mb must be a positive integer, got {memory!r}")
    polar = metadata.get("polar", {})
    docker_only = polar.get("docker_only") if isinstance(polar, dict) else None
    if docker_only is not None and not (isinstance(docker_only, str) and docker_only.strip()):
        raise TaskFormatError(f"{where}: [metadata.polar].docker_only must say why, as a non-empty string")
    services = polar.get("services") if isinstance(polar, dict) else None
    if services is not None and not (isinstance(services, str) and services.strip()):
        raise TaskFormatError(f"{where}: [metadata.polar].services must be a shell command, as a non-empty string")
    task = HarborTask(
        id=name,
        path=directory,
        instruction=(directory / "instruction.md").read_text(),
        metadata=metadata,
        tests=_files(directory / "tests"),
        solution=_files(directory / "solution") if (directory / "solution").is_dir() else {},
        dockerfile=dockerfile,
        docker_image=docker_image,
        workdir=DEFAULT_WORKDIR,
        verifier_timeout_s=_number(verifier, "timeout_sec", VERIFIER_TIMEOUT_S, f"{where}: [verifier]"),
        agent_timeout_s=_number(agent, "timeout_sec", AGENT_TIMEOUT_S, f"{where}: [agent]"),
        verifier_env=_strings(verifier, "env", f"{where}: [verifier]"),
        solution_env=_strings(solution, "env", f"{where}: [solution]"),
        memory_mb=memory,
        docker_only=docker_only,
        services=services,
    )
    compose = directory / "environment" / "docker-compose.yaml"
    if compose.is_file():
        _check_compose(compose, f"task {name}")
    if dockerfile is not None:
        task = replace(task, workdir=_workdir(stages(parse(dockerfile.read_text(), str(dockerfile)), str(dockerfile))))
    return task


COMPOSE_IGNORED = frozenset({"build", "image", "command", "container_name", "volumes", "environment", "deploy",
                             "network_mode", "init", "tty", "stdin_open"})
"""The keys of Harbor's main service polar accepts: they restate what the Dockerfile and task.toml say (polar builds
environment/Dockerfile, keeps the container alive itself, mounts its own log folders and reads cpus/memory_mb
from task.toml); `build`, `volumes` and `environment` only in the forms `_check_compose` allows."""
_PLACEHOLDER = re.compile(r"\$\{?\w+\}?")


def compose_service(path: Path, where: str, allowed: frozenset[str]) -> tuple[str, dict[str, Any]]:
    """The one service of a docker-compose file, as (name, settings); `TaskFormatError` says why a file is refused:
    several services (polar runs one container per task, so a task whose tests need a database or a server of its
    own in a second container cannot run), top-level keys beyond `services`, or a service key outside `allowed`."""
    try:
        import yaml
    except ImportError as e:
        raise TaskFormatError(f"{where}: reading {path.name} needs PyYAML: pip install pyyaml") from e
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise TaskFormatError(f"{where}: {path} is not valid YAML: {e}") from None
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or not services or not all(isinstance(v, dict) for v in services.values()):
        raise TaskFormatError(f"{where}: {path} has no `services` table of services")
    if len(services) > 1:
        raise TaskFormatError(f"{where}: {path} has {len(services)} services ({', '.join(services)}); polar runs one "
                              "container per task, so a task that needs a second service cannot run")
    if extra := sorted(set(data) - {"services", "version", "name"}):
        raise TaskFormatError(f"{where}: {path} sets {', '.join(extra)}; polar runs the one service on its own and "
                              "applies no top-level compose settings")
    (name, service), = services.items()
    if unknown := sorted(set(service) - allowed):
        raise TaskFormatError(f"{where}: {path}: service {name!r} sets {', '.join(unknown)}, which polar does not "
                              f"apply (it reads only {', '.join(sorted(allowed))}); put what the task needs in its "
                              "Dockerfile")
    return name, service


def _check_compose(path: Path, where: str) -> None:
    """environment/docker-compose.yaml: accepted when it restates the Dockerfile (a build of environment/ with its
    Dockerfile, Harbor's own `${VAR}` mounts and variables); anything it would add is refused, saying where it goes."""
    name, service = compose_service(path, where, COMPOSE_IGNORED)
    build = service.get("build")
    context, dockerfile = (build.get("context", "."), build.get("dockerfile", "Dockerfile")) \
        if isinstance(build, dict) else (build or ".", "Dockerfile")
    if not (context in (".", "./") or _PLACEHOLDER.fullmatch(str(context))) or dockerfile != "Dockerfile":
        raise TaskFormatError(f"{where}: {path}: service {name!r} builds {context}/{dockerfile}; polar builds "
                              "environment/Dockerfile with environment/ as its context")
    volumes = service.get("volumes") or []
    if own := [v for v in volumes if not (isinstance(v, str) and all(_PLACEHOLDER.fullmatch(side) for side in
                                                                        v.split(":")[:2]))]:
        raise TaskFormatError(f"{where}: {path}: service {name!r} mounts {own}; polar mounts no task volumes (copy "
                              "the files in with the Dockerfile)")
    environment = service.get("environment") or {}
    entries = environment.items() if isinstance(environment, dict) else (
        str(e).partition("=")[::2] for e in environment)
    if own := [k for k, v in entries if not _PLACEHOLDER.fullmatch(str(v))]:
        raise TaskFormatError(f"{where}: {path}: service {name!r} sets the variables {', '.join(own)}; polar sets "
                              "the container's environment from the Dockerfile: move them there as ENV lines")


def _workdir(found: list[Stage]) -> str:
    """The final stage's working directory, following WORKDIR lines (and stages built on earlier stages)."""
    chain = stage_chain(found)
    workdir, variables = base_workdir(chain), {}
    for stage in chain:
        for instruction in stage.instructions:
            if instruction.keyword in ("ENV", "ARG"):
                variables.update({k: v for k, v in assignments(instruction) if v is not None})
            elif instruction.keyword == "WORKDIR":
                path = substitute(instruction.args.strip().strip('"'), variables)
                workdir = posixpath.normpath(posixpath.join(workdir, path))
    return DEFAULT_WORKDIR if workdir == "/" else workdir


def load_suite(suite: str | Path | None = None) -> list[HarborTask]:
    """A bundled suite (`terminal-mini`, the default), a Harbor dataset directory (one task per
    subdirectory, as Terminal-Bench 2.0 ships), or a single task directory. In a dataset, a task folder that does
    not load is left out and named in the result's `rejected` (`polar.tasks.folders`)."""
    name = "terminal-mini" if suite is None else str(suite)
    root = SUITES.get(name) or Path(name)
    if not root.is_dir():
        raise UnknownNameError("Terminal-v0 suite", name, [*SUITES, "<a Harbor dataset or task directory>"])
    if (root / "task.toml").is_file() or (root / OLD_LAYOUT_FILE).is_file():
        return [load_task(root)]
    folders = [d for d in sorted(root.iterdir()) if d.is_dir() and not d.name.startswith((".", "_"))]
    return load_folders(root, folders, load_task, "task.toml, instruction.md, tests/test.sh")


# --- the reward files ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RewardReading:
    reward: float
    """The outcome, clipped to [0, 1]."""
    source: str
    """`reward.json` or `reward.txt`: the file that was read."""
    note: str = ""
    """What else is worth knowing (a clipped value, an ignored file, other metrics)."""


def read_reward(reward_json: bytes | None, reward_txt: bytes | None) -> RewardReading:
    """The outcome from the verifier's reward files (None: not written); `VerifierError` says what is wrong."""
    notes = []
    if reward_json is not None:
        value, source = _from_json(reward_json), "reward.json"
        if reward_txt is not None:
            notes.append("reward.txt was also written and is ignored: reward.json wins")
    elif reward_txt is not None:
        value, source = _from_text(reward_txt), "reward.txt"
    else:
        raise VerifierError(f"the test wrote no reward: neither {VERIFIER_DIR}/reward.txt nor reward.json exists")
    clipped = min(1.0, max(0.0, value))
    if clipped != value:
        notes.append(f"{source} says {value:g}, clipped to {clipped:g}")
    if reward_json is not None and isinstance(others := json.loads(reward_json), dict) and len(others) > 1:
        notes.append("other values in reward.json: " + ", ".join(f"{k}={v}" for k, v in others.items()
                                                                   if k != "reward")[:500])
    return RewardReading(clipped, source, "; ".join(notes))


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise VerifierError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def _from_text(raw: bytes) -> float:
    text = raw.decode(errors="replace").strip()
    if not text:
        raise VerifierError("reward.txt is empty")
    try:
        return _finite(float(text), "reward.txt")
    except ValueError:
        raise VerifierError(f"reward.txt must hold one number, got {text[:100]!r}") from None


def _from_json(raw: bytes) -> float:
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise VerifierError(f"reward.json is not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise VerifierError(f"reward.json must be an object like {{\"reward\": 1.0}}, got {type(data).__name__}")
    if "reward" in data:
        return _finite(data["reward"], "reward.json's `reward`")
    if len(data) == 1:
        (key, value), = data.items()
        return _finite(value, f"reward.json's only value `{key}`")
    raise VerifierError(f"reward.json has no `reward` key and {len(data)} values ({', '.join(sorted(data))[:200]}): "
                        "polar cannot tell which is the outcome")
