"""Dockerfiles, parsed: instructions in order, continuation lines joined, comments dropped, stages split.

Enough of the Dockerfile reference for polar's two uses of a task's Dockerfile: finding the base images it
names (the docker sandbox builds on polar's offline base when the engine lacks one) and replaying its steps
in a sandbox that was not built from it (the local sandbox). BuildKit heredocs (`RUN <<EOF`) are not read;
neither does the classic builder that the docker SDK drives.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

from polar.errors import TaskFormatError

_FLAG = re.compile(r"--([a-z-]+)(?:=(\S*))?")
_VARIABLE = re.compile(r"\\\$|\$(?:\{(?P<braced>\w+)(?::(?P<modifier>[-+])(?P<word>[^}]*))?\}|(?P<bare>\w+))")


@dataclass(frozen=True)
class Instruction:
    keyword: str
    """Upper case: FROM, RUN, COPY, ..."""
    args: str
    """Everything after the keyword and its `--flags`, continuation lines joined."""
    line: int
    """Where it starts in the file (1-based), for error messages."""
    flags: dict[str, str] = field(default_factory=dict)

    @property
    def exec_form(self) -> list[str] | None:
        """The JSON array form (`RUN ["a", "b"]`), or None for the shell form."""
        if self.args.startswith("["):
            try:
                words = json.loads(self.args)
            except json.JSONDecodeError:
                return None
            if isinstance(words, list) and all(isinstance(w, str) for w in words):
                return words
        return None

    def words(self) -> list[str]:
        """The arguments as words: the JSON array, or the shell form split like a shell would."""
        form = self.exec_form
        return form if form is not None else shlex.split(self.args)


@dataclass(frozen=True)
class Stage:
    base: str
    """The image (or earlier stage) named by FROM, as written."""
    name: str | None
    instructions: tuple[Instruction, ...]
    """Everything after the FROM, up to the next FROM."""


def parse(text: str, where: str = "Dockerfile") -> list[Instruction]:
    """The instructions of a Dockerfile; `where` names it in errors."""
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("#") or (pending and not stripped):
            continue
        if not pending:
            if not stripped:
                continue
            start = number
        continued = stripped.endswith("\\")
        pending.append(raw.rstrip()[:-1] if continued else raw)
        if not continued:
            instructions.append(_instruction("".join(pending).strip(), start, where))
            pending = []
    if pending:
        instructions.append(_instruction("".join(pending).strip(), start, where))
    return instructions


def _instruction(text: str, line: int, where: str) -> Instruction:
    keyword, _, rest = text.partition(" ")
    if not re.fullmatch(r"[A-Za-z]+", keyword):
        raise TaskFormatError(f"{where}:{line}: not a Dockerfile instruction: {text[:80]!r}")
    flags = {}
    rest = rest.strip()
    while rest.startswith("--") and (match := _FLAG.match(rest)):
        flags[match.group(1)] = match.group(2) or ""
        rest = rest[match.end():].strip()
    return Instruction(keyword.upper(), rest, line, flags)


def stages(instructions: list[Instruction], where: str = "Dockerfile") -> list[Stage]:
    """The build stages, in order; ARG lines before the first FROM are dropped (they only feed FROM)."""
    found: list[Stage] = []
    current: list[Instruction] | None = None
    base, name = "", None
    for instruction in instructions:
        if instruction.keyword == "FROM":
            if current is not None:
                found.append(Stage(base, name, tuple(current)))
            words = instruction.args.split()
            if not words:
                raise TaskFormatError(f"{where}:{instruction.line}: FROM names no image")
            base = words[0]
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            current = []
        elif current is not None:
            current.append(instruction)
        elif instruction.keyword != "ARG":
            raise TaskFormatError(f"{where}:{instruction.line}: {instruction.keyword} before the first FROM")
    if current is None:
        raise TaskFormatError(f"{where}: no FROM instruction")
    found.append(Stage(base, name, tuple(current)))
    return found


def substitute(text: str, variables: dict[str, str], keep_unknown: bool = False) -> str:
    """Expand `$NAME`, `${NAME}`, `${NAME:-default}` and `${NAME:+alt}` as the builder does. An unknown
    name becomes empty, or stays as written with `keep_unknown` (for a shell to expand later)."""

    def one(match: re.Match) -> str:
        if match.group(0) == "\\$":
            return match.group(0) if keep_unknown else "$"
        name = match.group("braced") or match.group("bare")
        modifier, word = match.group("modifier"), match.group("word") or ""
        if name not in variables:
            if keep_unknown:
                return match.group(0)
            return word if modifier == "-" else ""
        value = variables[name]
        if modifier == "-":
            return value or word
        if modifier == "+":
            return word if value else ""
        return value

    return _VARIABLE.sub(one, text)


def assignments(instruction: Instruction) -> list[tuple[str, str | None]]:
    """(name, value) pairs of an ENV or ARG line; an ARG without a default has value None."""
    if instruction.keyword == "ENV" and "=" not in instruction.args.split(None, 1)[0]:
        name, _, value = instruction.args.partition(" ")  # the legacy `ENV NAME value with spaces` form
        return [(name, value.strip())]
    pairs: list[tuple[str, str | None]] = []
    for word in shlex.split(instruction.args):
        name, sep, value = word.partition("=")
        pairs.append((name, value if sep else None))
    return pairs


BASE_WORKDIRS = {"laude-institute/t-bench/ubuntu-24-04": "/app", "laude-institute/t-bench/python-3-13": "/app"}
"""The WORKDIR of bases that tasks build on without one of their own, by repository: Terminal-Bench 1's bases (its
tasks `COPY` into `.` and their tests read /app). polar's stand-in for such a base keeps it."""


def repository(image: str) -> str:
    """The repository an image reference names, without registry, `library/` (or a registry's mirror of Docker
    Hub's, `docker/library/`), tag or digest: `python` for `docker.io/library/python:3.12-slim@sha256:...`."""
    name = image.split("@", 1)[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    parts = name.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    if len(parts) > 2 and parts[:2] == ["docker", "library"]:
        parts = parts[2:]
    if len(parts) > 1 and parts[0] == "library":
        parts = parts[1:]
    return "/".join(parts).lower()


def base_workdir(chain: list[Stage]) -> str:
    """Where the build of the stages `chain` (as `stage_chain` orders them) starts: its first base's WORKDIR where
    `BASE_WORKDIRS` knows it, else /."""
    return BASE_WORKDIRS.get(repository(chain[0].base), "/")


def final_user(chain: list[Stage]) -> str | None:
    """The USER the image built from the stages `chain` ends with (None: its base's, root unless the base says)."""
    users = [i.args.strip() for stage in chain for i in stage.instructions if i.keyword == "USER"]
    return users[-1] if users else None


def stage_chain(found: list[Stage]) -> list[Stage]:
    """The stages the final image is built from, in build order: the last stage, preceded by the earlier
    stages it is built on (`FROM build AS final` builds on `build`)."""
    by_name = {s.name.lower(): s for s in found if s.name}
    chain = [found[-1]]
    while (base := by_name.get(chain[-1].base.lower())) is not None and base not in chain:
        chain.append(base)
    return chain[::-1]


def shell_word(text: str, variables: dict[str, str]) -> str:
    """A shell word that evaluates to `text` as the builder would expand it: known variables now, unknown
    ones (`$PATH`, `$HOME`) by the shell that evaluates the word."""
    parts, last = [], 0
    for match in _VARIABLE.finditer(text):
        parts.append(shlex.quote(text[last:match.start()]) if match.start() > last else "")
        last = match.end()
        name = match.group("braced") or match.group("bare")
        if match.group(0) == "\\$":
            parts.append("'$'")
        elif name in variables:
            parts.append(shlex.quote(substitute(match.group(0), variables)))
        else:
            parts.append(f'"{match.group(0)}"')
    if last < len(text):
        parts.append(shlex.quote(text[last:]))
    return "".join(parts) or "''"
