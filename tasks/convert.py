"""`polar tasks convert SRC DEST`: tasks in the older Terminal-Bench layout, rewritten in Harbor's current one.

The older layout (Terminal-Bench 0.x, `tb run`) keeps everything at the task's root:

    <task-id>/task.yaml            instruction, author_*, difficulty, category, tags, max_agent_timeout_sec,
                                   max_test_timeout_sec, parser_name (pytest), run_tests_in_same_shell, ...
    <task-id>/Dockerfile           the image, built with the task's root as its context
    <task-id>/docker-compose.yaml  often: the `client` service, with Terminal-Bench's `${T_BENCH_*}` variables
    <task-id>/run-tests.sh         optional: installs the tests' dependencies and runs pytest on $TEST_DIR
    <task-id>/tests/               copied to $TEST_DIR (/tests) only when the tests run
    <task-id>/solution.sh          or solution.yaml: a list of {command, block, append_enter, min_timeout_sec}

Terminal-Bench passed a task when pytest's summary counted no failed test and no error (its `pytest` parser). The
converted `tests/test.sh` runs the task's own run-tests.sh the same way, with TEST_DIR=/tests, and writes that
verdict to /logs/verifier/reward.txt; when the output holds no pytest summary (the tests never ran: a download
failed, pytest is missing) it writes no reward, so polar reports a verifier error rather than a 0.

What a converted task holds: `instruction.md`, `task.toml` (the metadata; the timeouts as [agent] and [verifier]
timeout_sec), `environment/` (the old build context less what moved elsewhere, with the compose service's
`environment` and `working_dir` appended to the Dockerfile as ENV and WORKDIR lines), `tests/` (the old tests,
run-tests.sh and the generated test.sh) and `solution/solve.sh`. Each task is written to DEST/<task-id> and
checked by loading it with polar's Harbor loader; what cannot be converted is reported with its reason and
nothing of it is left in DEST.
"""

from __future__ import annotations

import argparse
import json
import posixpath
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polar.dockerfile import parse
from polar.errors import TaskFormatError
from polar.tasks.harbor import OLD_LAYOUT_FILE, TESTS_DIR, VERIFIER_DIR, compose_service, load_task

AGENT_TIMEOUT_S, TEST_TIMEOUT_S = 360.0, 60.0
"""Timeouts of a task.yaml that names none: the values Harbor's own mapping of this layout assumes."""
METADATA_KEYS = {"author_name": str, "author_email": str, "difficulty": str, "category": str, "tags": list,
                 "estimated_duration_sec": (int, float), "expert_time_estimate_min": (int, float),
                 "junior_time_estimate_min": (int, float)}
RUNNER_KEYS = {"max_agent_timeout_sec", "max_test_timeout_sec", "parser_name", "run_tests_in_same_shell",
               "disable_asciinema", "test_scripts", "descriptions", "instruction"}
"""Keys of task.yaml that say how Terminal-Bench ran the task: mapped or dropped here, never copied as metadata."""
COMPOSE_KEYS = frozenset({"build", "image", "container_name", "command", "volumes", "environment", "working_dir",
                          "network_mode", "deploy", "init", "tty", "stdin_open"})
"""The client service's keys the converter reads; any other (ports, depends_on, privileged, ...) is refused."""
MOVED = {OLD_LAYOUT_FILE, "docker-compose.yaml", "docker-compose.yml", "run-tests.sh", "solution.sh", "solution.yaml",
         "tests"}
"""What of the old task's root goes somewhere other than environment/ (unless the Dockerfile copies it)."""

VERIFIER = f"""#!/bin/bash
# Written by `polar tasks convert` for a task in the older Terminal-Bench layout: run the task's own run-tests.sh as
# Terminal-Bench ran it, then turn pytest's verdict (no failed test, no error) into the reward file.
export TEST_DIR={TESTS_DIR}
mkdir -p {VERIFIER_DIR}
log=$(mktemp)
bash {TESTS_DIR}/run-tests.sh 2>&1 | tee "$log"
summary=$(grep -E '([0-9]+ (passed|failed|errors?)|no tests ran)(,.*)? in [0-9.]+s' "$log" | tail -n 1)
if [ -z "$summary" ]; then
  echo "polar: run-tests.sh printed no pytest summary, so the tests did not run; no reward is written" >&2
  exit 1
fi
count() {{ printf '%s\\n' "$summary" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' || echo 0; }}
if [ "$(count passed)" -gt 0 ] && [ "$(count failed)" -eq 0 ] && [ "$(count 'errors?')" -eq 0 ]; then
  echo 1 > {VERIFIER_DIR}/reward.txt
else
  echo 0 > {VERIFIER_DIR}/reward.txt
fi
"""
DEFAULT_RUN_TESTS = f"""#!/bin/bash
# Terminal-Bench's rule for a task without run-tests.sh: pytest over the tests (written by `polar tasks convert`).
python3 -m pytest {TESTS_DIR} -rA
"""


@dataclass(frozen=True)
class Conversion:
    """One task folder's outcome: where it was written, or why it was not."""

    name: str
    target: Path | None = None
    reason: str | None = None
    notes: tuple[str, ...] = ()
    """What the conversion changed or dropped that a reader should know (a key polar does not apply, ...)."""


def convert(source: Path, dest: Path) -> list[Conversion]:
    """Convert one task folder (it holds task.yaml) or each task folder under `source` into `dest`/<task-id>."""
    source, dest = Path(source), Path(dest)
    if not source.is_dir():
        raise TaskFormatError(f"{source}: no such folder (pass a task folder holding {OLD_LAYOUT_FILE}, or a folder "
                              "of them)")
    folders = [source] if (source / OLD_LAYOUT_FILE).is_file() else [
        d for d in sorted(source.iterdir()) if d.is_dir() and not d.name.startswith((".", "_"))]
    if not folders:
        raise TaskFormatError(f"{source}: no task folders (each holds {OLD_LAYOUT_FILE})")
    dest.mkdir(parents=True, exist_ok=True)
    return [convert_task(folder, dest) for folder in folders]


def convert_task(source: Path, dest: Path) -> Conversion:
    """Convert one old-layout task folder into `dest`/<its name>; a task that cannot be converted leaves nothing."""
    name, target = source.name, dest / source.name
    if not (source / OLD_LAYOUT_FILE).is_file():
        why = ("it is already in Harbor's current layout (task.toml)" if (source / "task.toml").is_file()
               else f"no {OLD_LAYOUT_FILE}")
        return Conversion(name, reason=why)
    if target.exists():
        return Conversion(name, reason=f"{target} exists; remove it or convert into another folder")
    with tempfile.TemporaryDirectory(dir=dest, prefix=f".{name}.") as staging:
        work = Path(staging) / name
        try:
            notes = _write(source, work)
            load_task(work)  # what polar will read, read now: a conversion that does not load is no conversion
        except (TaskFormatError, OSError, UnicodeDecodeError) as e:
            return Conversion(name, reason=str(e))
        work.rename(target)
    return Conversion(name, target, notes=tuple(notes))


def _write(source: Path, out: Path) -> list[str]:
    """Write the converted task into `out`; the notes say what changed. `TaskFormatError` says why it cannot be."""
    import yaml

    notes: list[str] = []
    try:
        config = yaml.safe_load((source / OLD_LAYOUT_FILE).read_text())
    except yaml.YAMLError as e:
        raise TaskFormatError(f"{source / OLD_LAYOUT_FILE} is not valid YAML: {e}") from None
    if not isinstance(config, dict):
        raise TaskFormatError(f"{source / OLD_LAYOUT_FILE} must be a mapping of keys")
    parser = config.get("parser_name", "pytest")
    if parser != "pytest":
        raise TaskFormatError(f"{OLD_LAYOUT_FILE}: parser_name {parser!r}: only Terminal-Bench's `pytest` parser is "
                              "converted (its verdict: no failed test and no error)")
    if config.get("run_tests_in_same_shell"):
        notes.append("run_tests_in_same_shell: the tests run in a fresh shell in the working directory, without the "
                     "agent's shell variables")
    service = _service(source)
    context = _context(source, service)
    out.mkdir(parents=True)
    (out / "instruction.md").write_text(_instruction(config).rstrip("\n") + "\n")
    (out / "task.toml").write_text(_task_toml(config, service, notes))
    _environment(source, context, service, out / "environment", notes)
    _tests(source, out / "tests")
    _solution(source, out / "solution", notes)
    return notes


def _instruction(config: dict[str, Any]) -> str:
    text = config.get("instruction")
    if text is None:  # the earliest task.yaml files: a list of descriptions, the one keyed `base` is the task
        base = [d.get("description") for d in config.get("descriptions") or [] if isinstance(d, dict)
                and d.get("key") == "base"]
        text = base[0] if base else None
    if not isinstance(text, str) or not text.strip():
        raise TaskFormatError(f"{OLD_LAYOUT_FILE}: no `instruction` (or `descriptions` entry keyed `base`) to tell "
                              "the agent")
    return text


def _service(source: Path) -> dict[str, Any]:
    for file in ("docker-compose.yaml", "docker-compose.yml"):
        if (source / file).is_file():
            return compose_service(source / file, file, COMPOSE_KEYS)[1]
    return {}


def _context(source: Path, service: dict[str, Any]) -> tuple[Path, str]:
    """The build context folder and the Dockerfile's name in it."""
    build = service.get("build")
    context, dockerfile = (build.get("context", "."), build.get("dockerfile", "Dockerfile")) \
        if isinstance(build, dict) else (build or ".", "Dockerfile")
    folder = (source / str(context)).resolve()
    if not folder.is_relative_to(source.resolve()) or "${" in str(context):
        raise TaskFormatError(f"docker-compose: the build context {context!r} lies outside the task folder")
    if not (folder / str(dockerfile)).is_file():
        if service.get("image") and "${" not in str(service["image"]):
            raise TaskFormatError(f"docker-compose: the client service runs the prebuilt image {service['image']} "
                                  "and there is no Dockerfile; write one `FROM` it")
        raise TaskFormatError(f"no {dockerfile} in {folder} (the task's image)")
    return folder, str(dockerfile)


def _toml(value: Any) -> str:
    """A TOML value for the types task.yaml holds (JSON's escapes are TOML's for strings, numbers and lists)."""
    return json.dumps(value)


def _task_toml(config: dict[str, Any], service: dict[str, Any], notes: list[str]) -> str:
    lines = ['version = "1.0"', "", "[metadata]"]
    for key, kind in METADATA_KEYS.items():
        value = config.get(key)
        if isinstance(value, kind) and not isinstance(value, bool) and (
                kind is not list or all(isinstance(v, str) for v in value)):
            lines.append(f"{key} = {_toml(value)}")
    if ignored := sorted(set(config) - set(METADATA_KEYS) - RUNNER_KEYS):
        notes.append(f"task.yaml keys dropped (Harbor has no place for them): {', '.join(ignored)}")
    lines.append('source_layout = "terminal-bench task.yaml"')
    for table, key, default in (("verifier", "max_test_timeout_sec", TEST_TIMEOUT_S),
                                ("agent", "max_agent_timeout_sec", AGENT_TIMEOUT_S)):
        value = config.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise TaskFormatError(f"{OLD_LAYOUT_FILE}: {key} must be a positive number of seconds, got {value!r}")
        lines += ["", f"[{table}]", f"timeout_sec = {float(value)}"]
    limits = ((service.get("deploy") or {}).get("resources") or {}).get("limits") or {}
    cpus, memory = limits.get("cpus"), _megabytes(limits.get("memory"))
    environment = [f"cpus = {float(cpus):g}"] if _number(cpus) else []
    environment += [f"memory_mb = {memory}"] if memory else []
    if environment:
        lines += ["", "[environment]", *environment]
    return "\n".join(lines) + "\n"


def _number(value: Any) -> bool:
    try:
        return float(value) > 0
    except (TypeError, ValueError):
        return False


def _megabytes(value: Any) -> int | None:
    """A compose memory limit (`2g`, `512m`, bytes) in MB; None for a `${VAR}` or anything else."""
    text = str(value or "").strip().lower().removesuffix("b")
    scale = {"k": 1 / 1024, "m": 1, "g": 1024}.get(text[-1:], None)
    digits = text[:-1] if scale else text
    try:
        amount = float(digits)
    except ValueError:
        return None
    return max(1, round(amount * scale)) if scale else max(1, round(amount / 2**20))


def _environment(source: Path, context: tuple[Path, str], service: dict[str, Any], out: Path,
                 notes: list[str]) -> None:
    """environment/: the build context less what moved elsewhere (unless the Dockerfile copies it), the Dockerfile
    with the compose service's variables and working directory appended."""
    folder, name = context
    text = (folder / name).read_text()
    copied = _copied_sources(text, str(folder / name))
    top_level = folder == source.resolve()
    out.mkdir()
    for item in sorted(folder.iterdir()):
        if item.name == name or (top_level and item.name in MOVED and item.name not in copied):
            continue
        if top_level and item.name in MOVED:
            notes.append(f"the Dockerfile copies {item.name} into the image, so the agent can read it")
        (shutil.copytree if item.is_dir() else shutil.copy2)(item, out / item.name)
    additions = [f"ENV TEST_DIR={TESTS_DIR}"]
    environment = service.get("environment") or {}
    entries = environment.items() if isinstance(environment, dict) else (
        str(e).partition("=")[::2] for e in environment)
    for key, value in entries:
        if "${" in str(value):
            if key != "TEST_DIR":
                notes.append(f"compose variable {key}={value} dropped: it names a Terminal-Bench run setting")
            continue
        additions.append(f"ENV {key}={json.dumps(str(value))}")
    workdir = service.get("working_dir")
    if workdir and "${" not in str(workdir):
        additions.append(f"WORKDIR {workdir}")
    if "network_mode" in service:
        notes.append("compose network_mode dropped: the agent's container runs without network")
    (out / "Dockerfile").write_text(text.rstrip("\n") + "\n\n# From the task's docker-compose.yaml (polar tasks "
                                    "convert)\n" + "\n".join(additions) + "\n")


def _copied_sources(text: str, where: str) -> set[str]:
    """The first path component of every COPY/ADD source in a Dockerfile (not those from another stage)."""
    sources = set()
    for instruction in parse(text, where):
        if instruction.keyword in ("COPY", "ADD") and "from" not in instruction.flags:
            for word in instruction.words()[:-1]:
                sources.add(posixpath.normpath(word).split("/")[0])
    return sources


def _tests(source: Path, out: Path) -> None:
    if (source / "tests").is_dir():
        shutil.copytree(source / "tests", out)
    out.mkdir(exist_ok=True)
    if (out / "test.sh").exists():
        raise TaskFormatError("tests/test.sh exists, and the converted task's verifier must take that name; rename it "
                              "(and its uses in run-tests.sh)")
    run_tests = source / "run-tests.sh"
    (out / "run-tests.sh").write_text(run_tests.read_text() if run_tests.is_file() else DEFAULT_RUN_TESTS)
    (out / "test.sh").write_text(VERIFIER)


def _solution(source: Path, out: Path, notes: list[str]) -> None:
    if (source / "solution.sh").is_file():
        script = (source / "solution.sh").read_text()
    elif (source / "solution.yaml").is_file():
        script = _solution_script(source / "solution.yaml")
    else:
        notes.append("no solution.sh or solution.yaml: the task has no reference solution, so it cannot be admitted")
        return
    out.mkdir()
    (out / "solve.sh").write_text(script)


def _solution_script(path: Path) -> str:
    """solution.yaml's commands as one script. Terminal-Bench typed each into the agent's terminal; a script can
    replay a command that ends with Enter (waiting for it, or starting it in the background when `block` is false),
    never keystrokes sent to a program waiting for input."""
    import yaml

    steps = yaml.safe_load(path.read_text())
    if not isinstance(steps, list) or not steps:
        raise TaskFormatError(f"{path.name} must be a non-empty list of {{command: ...}} entries")
    lines = ["#!/bin/bash", "# solution.yaml's commands, in order (written by `polar tasks convert`)."]
    for n, step in enumerate(steps, 1):
        command = step.get("command") if isinstance(step, dict) else None
        if not isinstance(command, str) or not command.strip():
            raise TaskFormatError(f"{path.name} entry {n}: no `command`")
        if step.get("append_enter") is False:
            raise TaskFormatError(f"{path.name} entry {n}: keystrokes without Enter ({command[:40]!r}) are input to "
                                  "an interactive program, which a script cannot replay; write a solution.sh")
        if step.get("block") is False:
            lines.append(f"nohup bash -c {shlex.quote(command.rstrip())} >/dev/null 2>&1 &")
        else:
            lines.append(command.rstrip())
        wait = step.get("min_timeout_sec")
        if step.get("block") is False and isinstance(wait, int | float) and wait > 0:
            lines.append(f"sleep {wait:g}")
    return "\n".join(lines) + "\n"


def cmd_tasks_convert(args: argparse.Namespace) -> int:
    results = convert(Path(args.source), Path(args.dest))
    for result in results:
        if result.reason is not None:
            print(f"NOT CONVERTED {result.name}: {result.reason}")
        else:
            print(f"converted {result.name} -> {result.target}")
            for note in result.notes:
                print(f"  note: {note}")
    done = sum(r.target is not None for r in results)
    print(f"{done}/{len(results)} task(s) converted into {args.dest}" +
          (f"; run `polar tasks admit {args.dest}` to check them for real" if done else ""))
    return 0 if done == len(results) else 1


def add_parser(tasks: Any) -> None:
    """Register `polar tasks convert` on the `polar tasks` subparsers."""
    convert_cmd = tasks.add_parser("convert", help="rewrite tasks in the older Terminal-Bench layout (task.yaml, "
                                                   "run-tests.sh) in Harbor's current one (task.toml, instruction.md, "
                                                   "environment/, tests/test.sh, solution/solve.sh)")
    convert_cmd.add_argument("source", help="a task folder holding task.yaml, or a folder of them")
    convert_cmd.add_argument("dest", help="the folder the converted tasks are written into, one folder each")
    convert_cmd.set_defaults(fn=cmd_tasks_convert)
