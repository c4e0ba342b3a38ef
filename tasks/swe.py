"""SWE-bench instances: the swebench package's schema, loaders for JSONL, Parquet and Hugging Face datasets.

An instance names a repository at a commit, a problem statement, the gold `patch` that fixes it, the
`test_patch` that adds the tests proving it, and which tests must go from failing to passing
(`FAIL_TO_PASS`) and stay passing (`PASS_TO_PASS`). swebench 5.x rows also carry the official `image`, the
`eval_script` that runs the tests and the `log_parser` that reads their log; rows without them get a pytest
script and parser (see `polar.envs.swe`). Everything here is data: running it is the env family's job.

The bundled suites live in `tasks/swe/` (instances, the sdists of their projects, their licences): `swe-mini`
(bugs injected into real projects) and `swe-real-mini` (real bug fixes between consecutive releases).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polar.errors import TaskFormatError
from polar.protocols import RunCommand, SolutionStep, WriteFile

BUNDLED = Path(__file__).with_name("swe")
SUITES = {"swe-mini": BUNDLED / "swe-mini.jsonl", "swe-real-mini": BUNDLED / "real-mini.jsonl"}
REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement", "FAIL_TO_PASS",
            "PASS_TO_PASS")
OPTIONAL_TEXT = ("version", "environment_setup_commit", "hints_text", "created_at", "image", "eval_script",
                 "log_parser", "eval_type")
GOLD_PATCH_FILE = "/tmp/polar_gold.patch"


@dataclass(frozen=True)
class SweTask:
    """One SWE-bench instance. Field names are swebench's; `id` and `instruction` make it a polar Task."""

    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    problem_statement: str
    FAIL_TO_PASS: tuple[str, ...]
    PASS_TO_PASS: tuple[str, ...]
    version: str = ""
    environment_setup_commit: str = ""
    hints_text: str = ""
    created_at: str = ""
    image: str = ""
    """swebench 5.x: the official evaluation image (used when present in the Docker engine, never pulled)."""
    eval_script: str = ""
    """swebench 5.x: the script that applies the test patch and runs the tests between the log markers."""
    log_parser: str = ""
    """swebench 5.x: a name in `swebench.harness.log_parsers.PARSER_REGISTRY`."""
    eval_type: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    """Columns outside the schema, kept as they came (a dataset's own metadata)."""

    @property
    def id(self) -> str:
        return self.instance_id

    @property
    def instruction(self) -> str:
        return (f"{self.problem_statement.strip()}\n\nThe repository {self.repo} is checked out in the current "
                "directory (a git repository at the commit this issue was reported against). Change the source "
                "so the problem described above is fixed; hidden tests will check it. Changes to test files are "
                "discarded before grading. When you are done, submit.")

    def test_files(self) -> list[str]:
        """The files the test patch touches: the grader restores them and discards the agent's edits to them."""
        return patch_files(self.test_patch)

    def reference_solution(self) -> list[SolutionStep]:
        """Write the gold patch outside the repository and `git apply` it."""
        return [WriteFile(GOLD_PATCH_FILE, self.patch),
                RunCommand(f"git apply {GOLD_PATCH_FILE} && rm {GOLD_PATCH_FILE}")]

    def to_record(self) -> dict[str, Any]:
        """The instance as a swebench row (test lists as JSON strings, as the Hugging Face datasets store them)."""
        row = {name: getattr(self, name) for name in (*REQUIRED, *OPTIONAL_TEXT)}
        row["FAIL_TO_PASS"], row["PASS_TO_PASS"] = json.dumps(list(self.FAIL_TO_PASS)), json.dumps(
            list(self.PASS_TO_PASS))
        return {**self.extra, **row}


def patch_files(diff: str) -> list[str]:
    """The paths a unified git diff touches, in order (both sides of a rename)."""
    return list(dict.fromkeys(path for block in diff_blocks(diff) for path in block.paths))


@dataclass(frozen=True)
class DiffBlock:
    """One file's part of a git diff (from its `diff --git` line to the next), read strictly: anything `git apply`
    or `patch` could read differently from this parser is a `problem`, and a block with a problem is never applied."""

    text: str
    paths: tuple[str, ...]
    """Every path the block names: the `diff --git` line, `---`/`+++`, rename and copy lines (/dev/null left out)."""
    symlink: str | None = None
    """The target, when the block makes a symbolic link (mode 120000)."""
    problem: str | None = None


_EXTENDED = ("old mode ", "new mode ", "deleted file mode ", "new file mode ", "copy from ", "copy to ",
             "rename from ", "rename to ", "similarity index ", "dissimilarity index ", "index ")
_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_BASE85 = re.compile(r"[A-Za-z][0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]+")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def diff_blocks(diff: str) -> list[DiffBlock]:
    """The blocks of a git diff, in order. Text before the first `diff --git` line is a block of its own with a
    problem (`git apply` and `patch` would read a plain unified diff hidden there)."""
    lines = re.findall(r"[^\n]*\n|[^\n]+$", diff)
    starts = [i for i, line in enumerate(lines) if line.startswith("diff --git ")]
    head = "".join(lines[:starts[0] if starts else len(lines)])
    blocks = [DiffBlock(head, (), problem="text outside any `diff --git` block")] if head.strip() else []
    return blocks + [_block(lines[a:b]) for a, b in zip(starts, [*starts[1:], len(lines)], strict=False)]


def unquote_path(name: str) -> str:
    """A path as git prints it: C-quoted (octal bytes, backslash escapes) when it holds unusual characters."""
    if not (len(name) >= 2 and name[0] == name[-1] == '"'):
        return name
    raw, i, body = bytearray(), 0, name[1:-1]
    while i < len(body):
        if body[i] == "\\" and re.fullmatch(r"[0-7]{3}", body[i + 1:i + 4]):
            raw.append(int(body[i + 1:i + 4], 8))
            i += 4
        elif body[i] == "\\" and body[i + 1:i + 2] in _ESCAPES:
            raw.append(_ESCAPES[body[i + 1]])
            i += 2
        else:
            raw += body[i].encode()
            i += 1
    return raw.decode("utf-8", "surrogateescape")


def _strip_prefix(name: str) -> str | None:
    """A `---`/`+++`/`diff --git` name less its first component (`git apply -p1`); None for /dev/null."""
    name = unquote_path(name.split("\t", 1)[0] if not name.startswith('"') else name)
    return None if name == "/dev/null" else name.partition("/")[2]


def _header_names(rest: str) -> list[str]:
    """The two names of a `diff --git` line; none when they cannot be told apart (unquoted names with spaces)."""
    if rest.startswith('"'):
        first = _QUOTED.match(rest)
        return [rest[:first.end()], rest[first.end() + 1:]] if first and rest[first.end():first.end() + 1] == " " \
            else []
    if rest.endswith('"'):
        cut = rest.rfind(' "')
        return [rest[:cut], rest[cut + 1:]] if cut > 0 else []
    cuts = [i for i, c in enumerate(rest) if c == " " and rest[:i].partition("/")[2] == rest[i + 1:].partition("/")[2]]
    if len(cuts) == 1 or rest.count(" ") == 1:
        cut = cuts[0] if cuts else rest.index(" ")
        return [rest[:cut], rest[cut + 1:]]
    return []


def _block(lines: list[str]) -> DiffBlock:
    text, body = "".join(lines), [line.removesuffix("\n") for line in lines]
    paths: list[str | None] = [_strip_prefix(n) for n in _header_names(body[0][len("diff --git "):])]
    link, added, i = False, [], 1

    def broken(problem: str) -> DiffBlock:
        return DiffBlock(text, tuple(p for p in paths if p), problem=problem)

    while i < len(body) and body[i].startswith(_EXTENDED):
        for prefix in ("copy from ", "copy to ", "rename from ", "rename to "):
            if body[i].startswith(prefix):
                paths.append(unquote_path(body[i][len(prefix):]))
        link = link or body[i] in ("new file mode 120000", "new mode 120000") or (
            body[i].startswith("index ") and body[i].endswith(" 120000"))
        i += 1
    if i < len(body) and body[i].startswith("--- "):
        if i + 1 == len(body) or not body[i + 1].startswith("+++ "):
            return broken("a `---` line without its `+++` line")
        paths += [_strip_prefix(body[i][4:]), _strip_prefix(body[i + 1][4:])]
        i += 2
        while i < len(body) and (hunk := _HUNK.match(body[i])):
            old, new, i = int(hunk[1] or 1), int(hunk[2] or 1), i + 1
            while old > 0 or new > 0:
                tag = body[i][:1] if i < len(body) else "end"
                if tag not in ("", " ", "-", "+", "\\"):
                    return broken(f"a hunk shorter than its header says, or a stray line: {body[i - 1][:80]!r}")
                old -= tag in ("", " ", "-")
                new -= tag in ("", " ", "+")
                if tag == "+":
                    added.append(body[i][1:])
                if old < 0 or new < 0:
                    return broken("a hunk longer than its header says")
                i += 1
            while i < len(body) and body[i].startswith("\\"):
                i += 1
    elif i < len(body) and body[i] == "GIT binary patch":
        i += 1
        for _ in range(2):
            if i == len(body) or not re.fullmatch(r"(literal|delta) \d+", body[i]):
                break
            i += 1
            while i < len(body) and body[i]:
                if not _BASE85.fullmatch(body[i]):
                    return broken(f"a binary patch with a line that is not base85: {body[i][:80]!r}")
                i += 1
            i += 1
    elif i < len(body) and body[i].startswith("Binary files "):
        i += 1
    if any(line.strip() for line in body[i:]):
        return broken(f"a line that belongs to no part of a git diff: {body[i][:80]!r}")
    named = [p for p in paths if p is not None]
    if not named:
        return broken("it names no file that can be told for sure")
    for path in named:
        if path.startswith("/") or any(part in ("", ".", "..") for part in path.split("/")):
            return broken(f"the path {path!r} is not a plain path inside the repository")
    return DiffBlock(text, tuple(dict.fromkeys(named)), symlink="\n".join(added) if link else None)


def _text(row: dict, name: str, where: str, *, required: bool) -> str:
    value = row.get(name)
    if value is None:
        if required:
            raise TaskFormatError(f"{where}: missing field {name!r}")
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool) and name == "version":
        return f"{value}"  # some exports store versions like 3.0 as numbers
    if not isinstance(value, str):
        raise TaskFormatError(f"{where}: field {name!r} must be a string, got {type(value).__name__}")
    return value


def _tests(row: dict, name: str, where: str) -> tuple[str, ...]:
    value = row.get(name)
    if value is None:
        raise TaskFormatError(f"{where}: missing field {name!r}")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise TaskFormatError(f"{where}: field {name!r} is a string but not a JSON list: {e}") from None
    if hasattr(value, "tolist"):  # a numpy array, as Parquet columns of lists come back
        value = value.tolist()
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) and t for t in value):
        raise TaskFormatError(f"{where}: field {name!r} must be a list of test names")
    return tuple(value)


def _plain(value: Any) -> Any:
    """A dataset's own column as plain JSON data (Parquet gives numpy arrays and timestamps)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


IMAGE_FIELDS = ("docker_image", "image_name")
"""Other datasets' names for the instance's prebuilt image, read as `image` when a row has none: SWE-rebench's
`docker_image`, SWE-smith's `image_name` (SWE-Gym's rows name none; SWE-bench 5.x's `image` wins over both)."""


def _row_shape(row: dict[str, Any], where: str) -> dict[str, Any]:
    """A row of SWE-Gym, SWE-rebench or SWE-smith in swebench's schema: the image field renamed to `image`
    (the original column is kept among the extra columns). A SWE-smith row, whose `patch` introduces the bug
    into the image's repository rather than fixing it, is refused with that reason."""
    if "image_name" in row and "base_commit" not in row and "test_patch" not in row:
        raise TaskFormatError(f"{where}: a SWE-smith row (image_name, no base_commit or test_patch): its `patch` "
                              "puts the bug into the repository of its image, and polar's SWE env starts from "
                              "base_commit with no step that applies a bug first, so it cannot run these rows yet")
    if not row.get("image"):
        for name in IMAGE_FIELDS:
            if isinstance(row.get(name), str) and row[name]:
                return {**row, "image": row[name]}
    return row


def parse_instance(row: dict[str, Any], where: str = "instance") -> SweTask:
    """Check one row against the schema; a break raises TaskFormatError naming the instance and field."""
    if not isinstance(row, dict):
        raise TaskFormatError(f"{where}: an instance is a JSON object, got {type(row).__name__}")
    row = _row_shape(row, where)
    instance_id = _text(row, "instance_id", where, required=True)
    where = f"{where} {instance_id!r}" if where != "instance" else f"instance {instance_id!r}"
    text = {name: _text(row, name, where, required=True) for name in REQUIRED[1:6]}
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", text["repo"]):
        raise TaskFormatError(f"{where}: field 'repo' must be 'owner/name', got {text['repo']!r}")
    if not re.fullmatch(r"[0-9a-f]{7,40}", text["base_commit"]):
        raise TaskFormatError(f"{where}: field 'base_commit' must be a git commit hash, got {text['base_commit']!r}")
    for name in ("patch", "test_patch"):
        if text[name] and not patch_files(text[name]):
            raise TaskFormatError(f"{where}: field {name!r} is not a git diff (no 'diff --git' header)")
    if not text["patch"]:
        raise TaskFormatError(f"{where}: field 'patch' (the gold patch) is empty")
    f2p = _tests(row, "FAIL_TO_PASS", where)
    if not f2p:
        raise TaskFormatError(f"{where}: field 'FAIL_TO_PASS' is empty, so nothing would grade this instance")
    optional = {name: _text(row, name, where, required=False) for name in OPTIONAL_TEXT}
    extra = {k: _plain(v) for k, v in row.items() if k not in REQUIRED and k not in OPTIONAL_TEXT}
    return SweTask(instance_id=instance_id, **text, FAIL_TO_PASS=f2p, PASS_TO_PASS=_tests(row, "PASS_TO_PASS", where),
                   **optional, extra=extra)


def parse_instances(rows: Iterable[dict[str, Any]], source: str) -> list[SweTask]:
    tasks, seen = [], set()
    for i, row in enumerate(rows):
        task = parse_instance(row, f"{source} row {i + 1}")
        if task.instance_id in seen:
            raise TaskFormatError(f"{source}: instance {task.instance_id!r} appears twice")
        seen.add(task.instance_id)
        tasks.append(task)
    if not tasks:
        raise TaskFormatError(f"{source}: no instances")
    return tasks


def load_jsonl(path: str | Path) -> list[SweTask]:
    """A JSONL file (one instance a line) or a JSON file holding a list of instances."""
    path = Path(path)
    text = path.read_text()
    if path.suffix == ".json":
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as e:
            raise TaskFormatError(f"{path}: not valid JSON: {e}") from None
        return parse_instances(rows if isinstance(rows, list) else [rows], str(path))
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise TaskFormatError(f"{path} line {n}: not valid JSON: {e}") from None
    return parse_instances(rows, str(path))


def load_parquet(path: str | Path) -> list[SweTask]:
    import pandas as pd

    frame = pd.read_parquet(path)
    return parse_instances((dict(r) for r in frame.to_dict(orient="records")), str(path))


def load_hf(name: str, split: str = "test") -> list[SweTask]:
    """A Hugging Face dataset in SWE-bench's layout (SWE-bench Lite/Verified, SWE-Gym, SWE-smith), by hub name
    or a local copy of one (a folder with `data/<split>-*.parquet`), through `datasets.load_dataset`."""
    try:
        import datasets
    except ImportError as e:
        raise TaskFormatError(f"loading the dataset {name!r} needs the `datasets` package: "
                              "pip install 'polar-gym[swe]'") from e
    rows = datasets.load_dataset(name, split=split)
    return parse_instances((dict(r) for r in rows), f"{name} (split {split})")


def load_instances(source: str | Path | None = None) -> list[SweTask]:
    """Instances from a bundled suite name (`swe-mini`, the default), a `.jsonl`/`.json`/`.parquet` file, a
    folder in Hugging Face layout, or a hub dataset name with an optional split (`SWE-bench/SWE-bench_Lite@dev`)."""
    source = "swe-mini" if source is None else str(source)
    if source in SUITES:
        return load_jsonl(SUITES[source])
    path = Path(source)
    if path.is_file():
        if path.suffix == ".parquet":
            return load_parquet(path)
        return load_jsonl(path)
    name, _, split = source.rpartition("@") if "@" in source else (source, "", "test")
    if Path(name).is_dir():
        return load_hf(name, split)
    if path.suffix in (".jsonl", ".json", ".parquet") or name.startswith((".", "/")):
        raise TaskFormatError(f"{source}: no such file; pass a bundled suite ({', '.join(SUITES)}), a .jsonl, "
                              ".json or .parquet file, a dataset folder or a Hugging Face dataset name")
    return load_hf(name, split)
