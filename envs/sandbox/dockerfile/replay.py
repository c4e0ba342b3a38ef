"""Replaying a task's Dockerfile in a sandbox that was not built from it: the local sandbox.

The local sandbox runs on the host's own read-only system, so the Dockerfile cannot be built there; its
steps are replayed instead, in order: WORKDIR makes the directory, ENV is exported in the sandbox's shell,
ARG feeds later steps, COPY and ADD copy files from the build context (a source that leads out of it is refused,
as docker refuses it), RUN runs its command. A RUN that only installs Debian packages the host already has
installs nothing new, and is skipped; one that pip-installs packages by name becomes a step's `requirements`,
which the host installs into a site folder the sandbox mounts. FROM,
USER, CMD, ENTRYPOINT, EXPOSE, LABEL and the like are skipped: the system underneath is the host's.

A task needs the docker sandbox, and `plan` raises `DockerOnly` saying why, when its Dockerfile installs
anything else (Debian packages the host lacks, pip from a path or URL, npm, apk, curl, ...), writes outside
the places the local sandbox lets it write (the working directory, /tmp, and the family's writable dirs),
copies from another stage or a URL.
"""

from __future__ import annotations

import io
import posixpath
import re
import shlex
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from polar.dockerfile import (
    Instruction,
    assignments,
    base_workdir,
    parse,
    shell_word,
    stage_chain,
    stages,
    substitute,
)
from polar.errors import SandboxError, TaskFormatError
from polar.protocols import Sandbox

INSTALLERS = {"pip", "pip3", "pipx", "uv", "uvx", "conda", "mamba", "npm", "npx", "yarn", "pnpm", "gem", "cargo",
              "rustup", "go", "apk", "yum", "dnf", "zypper", "pacman", "brew", "curl", "wget", "snap"}
"""Commands that fetch or install software: a RUN using one needs the docker sandbox."""
_APT = {"apt-get", "apt", "aptitude"}
_SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", ";;", "|&"}
_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


class DockerOnly(Exception):
    """The task's Dockerfile cannot be replayed in the local sandbox; the message says why."""


@dataclass(frozen=True)
class Step:
    where: str
    """The Dockerfile line it replays (`Dockerfile:12 RUN ...`), for errors."""
    command: str
    """Run in the sandbox's shell (after unpacking `archive`, if any)."""
    archive: bytes | None = None
    """A tar of files to unpack at /, for COPY and ADD."""
    requirements: tuple[str, ...] = ()
    """What a `RUN pip install` installs, for the host to install into a site folder the sandbox mounts
    (`polar.envs.sandbox.site`); the step itself runs nothing."""


def _writable(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


@cache
def host_has_debs(packages: tuple[str, ...]) -> tuple[str, ...]:
    """The packages among `packages` that the host's dpkg does not list as installed."""
    dpkg = shutil.which("dpkg-query")
    if dpkg is None:
        return packages
    out = subprocess.run([dpkg, "-W", "-f=${Package} ${db:Status-Status}\n", *packages],
                         capture_output=True, text=True).stdout
    installed = {line.split()[0] for line in out.splitlines() if line.endswith(" installed")}
    return tuple(p for p in packages if p not in installed)


def _simple_commands(command: str) -> list[list[str]] | None:
    """The simple commands of a shell command line (words, leading `VAR=value` and `sudo` dropped), or None
    when it does not split cleanly."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in _SEPARATORS:
                commands.append([])
            else:
                commands[-1].append(token)
    except ValueError:
        return None
    result = []
    for words in filter(None, commands):
        while words and ("=" in words[0] and not words[0].startswith("=") or words[0] in ("sudo", "env")):
            words = words[1:]
        if words:
            result.append(words)
    return result


_PIP_FLAGS = {"-q", "--quiet", "--no-cache-dir", "--break-system-packages", "-U", "--upgrade", "--user",
              "--disable-pip-version-check", "--no-input", "--root-user-action=ignore", "--progress-bar=off"}
"""pip install options that change nothing about what is installed into a site folder."""
REQUIREMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?([<>=!~]=?[^\s;,]+)*(,[<>=!~]=?[^\s;,]+)*")
"""A pip requirement by name (extras and version specifiers allowed, no path or URL), for `fullmatch`."""


def _pip_requirements(words: list[str]) -> list[str] | None:
    """The requirements of `pip install ...` (`pip3`, `python -m pip`) that names only packages, else None: a path,
    a URL, a requirements file or an option that picks where from needs docker."""
    program = posixpath.basename(words[0])
    if program in ("pip", "pip3"):
        rest = words[1:]
    elif program.startswith("python") and words[1:3] == ["-m", "pip"]:
        rest = words[3:]
    else:
        return None
    if rest[:1] != ["install"]:
        return None
    options = [w for w in rest[1:] if w.startswith("-")]
    names = [w for w in rest[1:] if not w.startswith("-")]
    if not names or not set(options) <= _PIP_FLAGS or not all(REQUIREMENT.fullmatch(n) for n in names):
        return None
    return names


def _classify_run(command: str, where: str) -> str | tuple[str, ...]:
    """`skip` (installs nothing new), `run`, or the requirements of a RUN that only pip-installs packages (and
    Debian packages the host has); raises DockerOnly for anything else that installs."""
    commands = _simple_commands(command)
    if commands is None:
        return "run"
    packaging, missing, requirements = 0, [], []
    for words in commands:
        program = posixpath.basename(words[0])
        if (wanted := _pip_requirements(words)) is not None:
            packaging += 1
            requirements += wanted
            continue
        if program in INSTALLERS or (program.startswith("python") and words[1:3] == ["-m", "pip"]) or \
                (program == "git" and "clone" in words[1:2]):
            raise DockerOnly(f"{where}: installs or downloads software (`{' '.join(words[:3])}`), which the local "
                             "sandbox cannot: it runs on the host's read-only system with no network")
        if program in _APT:
            packaging += 1
            if "install" in words:
                names = [w.split("=")[0].split(":")[0] for w in words[words.index("install") + 1:]
                         if not w.startswith("-")]
                missing += host_has_debs(tuple(names))
        elif program == "rm" and any(w.startswith("/var/lib/apt/lists") for w in words) or program == "dpkg":
            packaging += 1
    if missing:
        raise DockerOnly(f"{where}: needs Debian packages the host lacks: {', '.join(missing)}")
    if packaging == len(commands):
        return tuple(requirements) if requirements else "skip"
    if packaging:
        raise DockerOnly(f"{where}: mixes package installs with other commands; split it, or run the task in docker")
    return "run"


def plan(dockerfile: Path, home: str, writable: tuple[str, ...]) -> list[Step]:
    """The steps that replay `dockerfile` (its folder is the build context) and end in the directory `home`;
    `writable` are the absolute paths the sandbox can write besides `home` and /tmp."""
    where = str(dockerfile)
    roots = (home, "/tmp", *writable)
    chain = stage_chain(stages(parse(dockerfile.read_text(), where), where))
    context = dockerfile.parent
    steps: list[Step] = []
    workdir, variables, args, known_dirs = "/", {}, {}, {home, *roots}
    shell = ["/bin/sh", "-c"]
    if (start := base_workdir(chain)) != "/":  # the base's own WORKDIR (`BASE_WORKDIRS`), as if the file began with it
        if not _writable(start, roots):
            raise DockerOnly(f"{dockerfile.name}: its base {chain[0].base} works in {start}, outside what the local "
                             f"sandbox can write ({', '.join(roots)})")
        workdir = start
        known_dirs.add(workdir)
        steps.append(Step(f"{dockerfile.name}:1 FROM {chain[0].base}"[:200], f"mkdir -p {shlex.quote(workdir)}"))
    for instruction in (i for stage in chain for i in stage.instructions):
        at = f"{dockerfile.name}:{instruction.line} {instruction.keyword} {instruction.args}"[:200]
        keyword = instruction.keyword
        if keyword == "WORKDIR":
            path = substitute(instruction.args.strip().strip('"'), variables)
            workdir = posixpath.normpath(posixpath.join(workdir, path))
            if not _writable(workdir, roots):
                raise DockerOnly(f"{at}: works in {workdir}, outside what the local sandbox can write "
                                 f"({', '.join(roots)})")
            known_dirs.add(workdir)
            steps.append(Step(at, f"mkdir -p {shlex.quote(workdir)}"))
        elif keyword in ("ENV", "ARG"):
            for name, value in assignments(instruction):
                if keyword == "ARG":
                    if value is not None:
                        args[name] = variables[name] = substitute(value, variables)
                    continue
                steps.append(Step(at, f"export {name}={shell_word(value or '', variables)}"))
                variables[name] = substitute(value or "", variables)
                args.pop(name, None)
        elif keyword in ("COPY", "ADD"):
            steps.append(_copy(instruction, at, context, workdir, variables, roots, known_dirs))
        elif keyword == "SHELL":
            shell = instruction.words()
        elif keyword == "RUN":
            form = instruction.exec_form
            command = shlex.join(form) if form is not None else instruction.args
            kind = _classify_run(command, at) if form is None else "run"
            if kind == "skip":
                continue
            if isinstance(kind, tuple):
                steps.append(Step(at, ":", requirements=kind))
                continue
            exports = "".join(f"export {k}={shlex.quote(v)}; " for k, v in args.items())
            run = shlex.join(form) if form is not None else shlex.join([*shell, command])
            steps.append(Step(at, f"(cd {shlex.quote(workdir)} && {exports}{run})"))
    quoted = shlex.quote(home)
    steps.append(Step("(the working directory)", f"mkdir -p {quoted} && cd {quoted}"))
    return steps


def _copy(instruction: Instruction, at: str, context: Path, workdir: str, variables: dict[str, str],
          roots: tuple[str, ...], known_dirs: set[str]) -> Step:
    if "from" in instruction.flags:
        raise DockerOnly(f"{at}: copies from another build stage or image")
    words = [substitute(w, variables) for w in instruction.words()]
    if len(words) < 2:
        raise TaskFormatError(f"{at}: needs a source and a destination")
    sources, dest = words[:-1], words[-1]
    target = posixpath.normpath(posixpath.join(workdir, dest))
    if not _writable(target, roots):
        raise DockerOnly(f"{at}: writes {target}, outside what the local sandbox can write ({', '.join(roots)})")
    into_dir = dest.endswith("/") or len(sources) > 1 or target in known_dirs
    mode = int(instruction.flags["chmod"], 8) if instruction.flags.get("chmod") else None
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for source in sources:
            if instruction.keyword == "ADD" and ("://" in source or source.startswith("git@")):
                raise DockerOnly(f"{at}: downloads {source}")
            matches = sorted(p for p in context.glob(source.lstrip("/")) if p.exists()) if any(
                c in source for c in "*?[") else [context / source.lstrip("/")]
            if not matches or not all(p.exists() for p in matches):
                raise TaskFormatError(f"{at}: {source} is not in the build context {context}")
            for path in matches:
                _inside_context(path, context, at)
                if instruction.keyword == "ADD" and path.is_file() and path.name.endswith(_ARCHIVES):
                    raise DockerOnly(f"{at}: ADD unpacks the archive {path.name}, which the replay does not")
                if path.is_dir():
                    known_dirs.add(target)
                    for inner in sorted(path.rglob("*")):
                        _add(tar, inner, posixpath.join(target, inner.relative_to(path).as_posix()), mode)
                else:
                    name = posixpath.join(target, path.name) if into_dir else target
                    _add(tar, path, name, mode)
    return Step(at, "", out.getvalue())


def _inside_context(path: Path, context: Path, at: str) -> None:
    """Refuse a source that is, or whose symlinks lead, outside the build context (`../x`, a link to /etc), as
    docker does: the replay runs on the host, where such a path would copy the host's own files in. An absolute
    source is already taken inside the context, as docker takes it."""
    real, root = path.resolve(), context.resolve()
    if real != root and root not in real.parents:
        raise TaskFormatError(f"{at}: {path} leads outside the build context {context} (to {real}); docker "
                              "refuses that too: copy the file into the task's environment folder")


def _add(tar: tarfile.TarFile, path: Path, name: str, mode: int | None) -> None:
    info = tar.gettarinfo(str(path), arcname=name.lstrip("/"))
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if mode is not None and info.isfile():
        info.mode = mode
    if info.isfile():
        with open(path, "rb") as f:
            tar.addfile(info, f)
    else:
        tar.addfile(info)


async def replay(sandbox: Sandbox, steps: list[Step], timeout_s: float, task_id: str) -> None:
    """Run the steps in the sandbox, each within `timeout_s`; a failing step raises `SandboxError` naming the
    task and the line."""
    for step in steps:
        command = step.command
        if step.archive is not None:
            await sandbox.write("/tmp/.polar-copy.tar", step.archive)
            command = "tar -xf /tmp/.polar-copy.tar -C / --no-same-owner; s=$?; rm -f /tmp/.polar-copy.tar; " \
                      "[ $s -eq 0 ]" + (f" && {command}" if command else "")
        result = await sandbox.exec(command, timeout=timeout_s)
        if result.exit_code != 0:
            raise SandboxError(
                f"task {task_id}: replaying {step.where} in the local sandbox failed (exit code {result.exit_code}):\n"
                f"{result.output[-2000:]}\nIf the task needs more than the host's system offers, mark it "
                "`[metadata.polar] docker_only = \"<why>\"` in its task.toml and run it with sandbox='docker'.")
