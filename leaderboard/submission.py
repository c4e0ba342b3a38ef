"""The submission format `polar.submission/v1`: an eval run plus a manifest naming what it measured.

A submission is a directory (or the same files in a `.tar.gz`) holding exactly:

    manifest.json     `Manifest`: env, suite and its content hash, harness, model, policy settings, k, date,
                      polar-gym version, and the sha256 of each file below
    results.parquet   one row per episode, as `polar eval` writes it
    summary.json      pass@k, mean reward, ..., as `polar eval` writes it
    traces.jsonl      every episode as a `polar.trace/v1` trace, one a line

Everything in the manifest can be checked against the other three files and the installed suite
(`polar.leaderboard.validate`); nothing in it is taken on trust.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from polar.errors import PolarError
from polar.evaluation.evaluate import EvalSettings

SCHEMA_ID = "polar.submission/v1"
DATA_FILES = ("results.parquet", "summary.json", "traces.jsonl")
FILES = ("manifest.json", *DATA_FILES)


class SubmissionError(PolarError):
    """A submission is malformed or does not check out; the message names the file, episode or field."""


class HarnessInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str | None = Field(description="as every trace records it")


class PolicyInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the `polar eval --policy` name: oracle, empty, local, openai, ...")
    max_turns: int = Field(ge=1)
    time_limit_s: float | None = Field(default=None, gt=0)
    """The episode budget the run set; None: each task's own."""
    settings: dict[str, str | int | float | bool | None] = Field(
        default_factory=dict, description="sampling settings the run did not record itself (max_new_tokens, ...)")


class Manifest(BaseModel):
    """manifest.json. Together with the traces it holds everything `polar eval` recorded in run.json."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_id: Literal["polar.submission/v1"] = Field(default=SCHEMA_ID, alias="schema")
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", description="unique on the leaderboard")
    env_id: str
    env_version: int
    suite: str
    suite_hash: str = Field(pattern=r"^[0-9a-f]{16}$", description="`suite_hash` of the tasks below")
    tasks: list[str] = Field(min_length=1)
    harness: HarnessInfo
    model: str | None
    policy: PolicyInfo
    sandbox: str = Field(description="the sandbox backend the run used; re-grading uses it too")
    seed: int = Field(description="the base seed; episode seeds are `episode_seed(seed, task, sample)`")
    k: int = Field(ge=1, description="samples per task")
    date: dt.date = Field(description="the day (UTC) the run's last episode ended")
    polar_version: str
    files: dict[str, str] = Field(description="sha256 (hex) of each data file")

    def eval_settings(self) -> EvalSettings:
        """The run.json of the run this submission packs."""
        return EvalSettings(
            env_id=self.env_id, harness=self.harness.name, sandbox=self.sandbox, policy=self.policy.name,
            model=self.model, suite=self.suite, suite_hash=self.suite_hash, tasks=tuple(self.tasks), k=self.k,
            seed=self.seed, max_turns=self.policy.max_turns, time_limit_s=self.policy.time_limit_s,
            polar_version=self.polar_version)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=True), indent=2) + "\n"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(directory: Path) -> Manifest:
    """Parse manifest.json; any break of the schema raises SubmissionError naming the field."""
    path = directory / "manifest.json"
    try:
        return Manifest.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise SubmissionError(f"{path}: missing (every submission needs a manifest.json)") from None
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(map(str, first["loc"])) or "(top level)"
        raise SubmissionError(f"manifest.json: field {where}: {first['msg']} ({e.error_count()} error(s))") from None


def read_summary(directory: Path) -> dict[str, Any]:
    try:
        return json.loads((directory / "summary.json").read_text())
    except ValueError as e:
        raise SubmissionError(f"summary.json: not valid JSON: {e}") from None


@contextmanager
def opened(path: Path) -> Iterator[Path]:
    """The submission's directory: `path` itself, or a temporary extraction of a .tar.gz.

    A tarball holds the four files at its top level or in one top-level folder.
    """
    path = Path(path)
    if path.is_dir():
        yield path
        return
    if not path.name.endswith((".tar.gz", ".tgz")) or not path.is_file():
        raise SubmissionError(f"{path}: not a submission directory or .tar.gz")
    with tempfile.TemporaryDirectory(prefix="polar-submission-") as tmp:
        try:
            with tarfile.open(path, "r:gz") as tar:
                tar.extractall(tmp, filter="data")
        except (tarfile.TarError, OSError) as e:
            raise SubmissionError(f"{path}: cannot unpack: {e}") from None
        root = Path(tmp)
        entries = list(root.iterdir())
        if len(entries) == 1 and entries[0].is_dir():
            root = entries[0]
        yield root


def check_files(directory: Path) -> None:
    """Exactly the four files, and each data file hashes to what the manifest says."""
    present = sorted(p.name for p in directory.iterdir())
    missing = [name for name in FILES if name not in present]
    if missing:
        raise SubmissionError(f"{directory}: missing {', '.join(missing)} (a submission holds {', '.join(FILES)})")
    extra = [name for name in present if name not in FILES]
    if extra:
        raise SubmissionError(f"{directory}: unexpected {', '.join(extra)} "
                              f"(a submission holds only {', '.join(FILES)})")
    manifest = read_manifest(directory)
    if sorted(manifest.files) != sorted(DATA_FILES):
        raise SubmissionError(f"manifest.json: field files must hash exactly {', '.join(DATA_FILES)}; "
                              f"it names {', '.join(sorted(manifest.files)) or 'nothing'}")
    for name in DATA_FILES:
        actual = sha256(directory / name)
        if actual != manifest.files[name]:
            raise SubmissionError(f"{name}: sha256 is {actual}, manifest.json says {manifest.files[name]} "
                                  "(the file changed after the submission was packed)")
