"""Packing a finished `polar eval` run directory into a submission (`polar leaderboard submit`)."""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from polar.evaluation.evaluate import EvalSettings
from polar.leaderboard.submission import DATA_FILES, HarnessInfo, Manifest, PolicyInfo, SubmissionError, sha256
from polar.leaderboard.validate import check, match_episodes
from polar.trace import read_jsonl


def read_run(run_dir: Path) -> EvalSettings:
    path = run_dir / "run.json"
    try:
        data = json.loads(path.read_text())
        return EvalSettings(**{**data, "tasks": tuple(data["tasks"])})
    except FileNotFoundError:
        raise SubmissionError(f"{path}: missing; submit the --out directory of a `polar eval` run") from None
    except (ValueError, TypeError, KeyError) as e:
        raise SubmissionError(f"{path}: not the run.json of a `polar eval` run: {e}") from None


def default_name(out: Path) -> str:
    """The submission's name when none is given: its file or directory name, less .tar.gz or .submission."""
    name = out.resolve().name
    for suffix in (".tar.gz", ".tgz", ".submission"):
        name = name.removesuffix(suffix)
    return name


def pack(run_dir: Path, out: Path, name: str | None = None, settings: dict[str, Any] | None = None) -> Manifest:
    """Write the submission for `run_dir` to `out` (a directory, or a file ending .tar.gz) and check it.

    Refuses a run that is missing an episode, whose traces disagree on the harness version, or whose
    summary.json / results.parquet are stale (rerun the same `polar eval` command to finish or rewrite them).
    """
    run_dir, out = Path(run_dir), Path(out)
    run = read_run(run_dir)
    for file in DATA_FILES:
        if not (run_dir / file).exists():
            raise SubmissionError(f"{run_dir / file}: missing; rerun the same `polar eval` command to finish the run")
    try:
        traces = list(enumerate(read_jsonl(run_dir / "traces.jsonl"), 1))
    except ValueError as e:
        raise SubmissionError(str(e)) from None
    episodes = match_episodes(traces, list(run.tasks), run.k, run.seed, where=str(run_dir / "traces.jsonl"))
    versions = sorted({str(t.harness.version) for t in episodes.values()})
    if len(versions) != 1:
        raise SubmissionError(f"{run_dir}: the traces were made by {run.harness} versions {', '.join(versions)}; "
                              "a submission measures one version")
    env_versions = {t.env_version for t in episodes.values()}
    manifest = Manifest(
        name=name or default_name(out), env_id=run.env_id, env_version=env_versions.pop(), suite=str(run.suite),
        suite_hash=run.suite_hash, tasks=list(run.tasks),
        harness=HarnessInfo(name=run.harness, version=next(iter(episodes.values())).harness.version),
        model=run.model, policy=PolicyInfo(name=run.policy, max_turns=run.max_turns, time_limit_s=run.time_limit_s,
                                           settings=settings or {}),
        sandbox=run.sandbox, seed=run.seed, k=run.k,
        date=max(datetime.fromisoformat(t.ended_at) for t in episodes.values()).date(),
        polar_version=run.polar_version, files={file: sha256(run_dir / file) for file in DATA_FILES})
    with tempfile.TemporaryDirectory(prefix="polar-submit-") as tmp:
        staged = Path(tmp) / manifest.name
        staged.mkdir()
        for file in DATA_FILES:
            shutil.copyfile(run_dir / file, staged / file)
        (staged / "manifest.json").write_text(manifest.to_json())
        check(staged)
        if out.name.endswith((".tar.gz", ".tgz")):
            out.parent.mkdir(parents=True, exist_ok=True)
            with tarfile.open(out, "w:gz") as tar:
                tar.add(staged, arcname=manifest.name)
        else:
            if out.exists() and any(out.iterdir()):
                raise SubmissionError(f"{out}: exists and is not empty; pass another --out (nothing was overwritten)")
            shutil.copytree(staged, out, dirs_exist_ok=True)
    return manifest
