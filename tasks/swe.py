"""SWE-bench instances: the swebench package's schema, loaders for JSONL, Parquet and Hugging Face datasets.

An instance names a repository at a commit, a problem statement, the gold `patch` that fixes it, the
`test_patch` that adds the tests proving it, and which tests must go from failing to passing
(`FAIL_TO_PASS`) and stay passing (`PASS_TO_PASS`). swebench 5.x rows also carry the official `image`, the
`eval_script` that runs the tests and the `log_parser` that reads their log; rows without them get a pytest
script and parser (see `polar.envs.swe`). Everything here is data: running it is the env family's job.

The bundled suite `swe-mini` lives in `tasks/swe/` (instances, the sdists of its projects, their licences).
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
SUITES = {"swe-mini": BUNDLED / "swe-mini.jsonl"}
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
    paths: list[str] = []
    for match in re.finditer(r"^diff --git a/(\S+) b/(\S+)$", diff, re.M):
        for path in match.groups():
            if path not in paths:
                paths.append(path)
    return paths


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


def parse_instance(row: dict[str, Any], where: str = "instance") -> SweTask:
    """Check one row against the schema; a break raises TaskFormatError naming the instance and field."""
    if not isinstance(row, dict):
        raise TaskFormatError(f"{where}: an instance is a JSON object, got {type(row).__name__}")
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
