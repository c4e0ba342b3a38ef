"""Checking a submission: every claim in it is recomputed from the traces, the installed suite and a re-grade.

`check` does everything that needs no sandbox, cheapest first: the files and their hashes, the manifest's
schema, the env, the suite's content hash and that the run covers every task of the suite, each trace against
`polar/trace.schema.json`, the traces against the manifest, completeness (every task x k, no duplicates, the seeds
`polar eval` uses), each reward against its components, and summary.json and results.parquet recomputed from the
traces. `validate` adds re-grading (`polar.leaderboard.regrade`) and replay (`polar.leaderboard.replay`). The
first problem found raises `SubmissionError` with the reason.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polar.envs.polar_env import seeded_episode_id
from polar.errors import PolarError
from polar.evaluation.evaluate import EvalRun, episode_seed, results_rows, suite_hash, summarize
from polar.leaderboard.submission import (
    Manifest,
    SubmissionError,
    check_files,
    opened,
    read_manifest,
    read_summary,
    sha256,
)
from polar.protocols import EnvFamily
from polar.trace import Trace, load_schema

Key = tuple[str, int]
"""(task id, sample index)."""


@dataclass
class Checked:
    """A submission that passed `check`: its manifest, env family, tasks and episodes by (task, sample)."""

    manifest: Manifest
    family: EnvFamily
    tasks: dict[str, Any]
    episodes: dict[Key, Trace]
    summary: dict[str, Any]


def load_family(env_id: str) -> EnvFamily:
    """The env family object (task loading, grading, reward spec) behind a registered env id."""
    from polar.envs.registration import ENVS, env_family

    if env_id not in ENVS:
        raise SubmissionError(f"manifest.json: env_id {env_id!r} is not an env of this polar-gym "
                              f"({', '.join(ENVS)})")
    return env_family(env_id)()


def label(key: Key, trace: Trace) -> str:
    return f"episode {trace.episode_id} ({key[0]}#{key[1]})"


def read_traces(path: Path) -> list[tuple[int, Trace]]:
    """(line number, trace) for each line; a line that breaks the schema raises SubmissionError naming it."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema())
    traces = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path.name}:{lineno}"
            try:
                data = json.loads(line)
            except ValueError as e:
                raise SubmissionError(f"{where}: not JSON: {e}") from None
            if isinstance(data, dict) and isinstance(data.get("episode_id"), str):
                where += f" (episode {data['episode_id']})"
            error = next(iter(sorted(validator.iter_errors(data), key=lambda e: list(e.path))), None)
            if error is not None:
                at = "/".join(map(str, error.path)) or "(top level)"
                raise SubmissionError(f"{where}: not a valid polar.trace/v1 trace: at {at}: {error.message[:300]}")
            try:
                traces.append((lineno, Trace.model_validate(data)))
            except ValueError as e:
                raise SubmissionError(f"{where}: not a valid polar.trace/v1 trace: {str(e)[:300]}") from None
    return traces


def match_episodes(traces: list[tuple[int, Trace]], tasks: list[str], k: int, seed: int,
                   where: str = "traces.jsonl") -> dict[Key, Trace]:
    """Each trace's (task, sample), found from its seed; every task x k exactly once or SubmissionError."""
    seeds = {(t, episode_seed(seed, t, s)): (t, s) for t in tasks for s in range(k)}
    episodes: dict[Key, Trace] = {}
    lines: dict[Key, int] = {}
    for lineno, trace in traces:
        key = seeds.get((trace.task_id, trace.seed))
        if key is None:
            raise SubmissionError(
                f"{where}:{lineno}: episode {trace.episode_id} of task {trace.task_id!r} has seed {trace.seed}, "
                f"which is not episode_seed({seed}, task, sample) for a task of the run and a sample < k={k}")
        made_by = seeded_episode_id(trace.seed)
        if trace.episode_id != made_by or any(t.request.episode_id not in (None, made_by) for t in trace.turns):
            raise SubmissionError(
                f"{where}:{lineno}: episode {trace.episode_id} of task {trace.task_id!r} says seed {trace.seed}, but "
                f"a reset with that seed is episode {made_by}: it was played with another seed (a sample of a larger "
                "run relabelled?)")
        if key in episodes:
            raise SubmissionError(f"{where}:{lineno}: {label(key, trace)} duplicates "
                                  f"{label(key, episodes[key])} on line {lines[key]}")
        episodes[key], lines[key] = trace, lineno
    missing = [f"{t}#{s}" for s in range(k) for t in tasks if (t, s) not in episodes]
    if missing:
        raise SubmissionError(f"{where}: incomplete: {len(episodes)} of {len(tasks) * k} episodes; missing "
                              f"{', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}")
    return episodes


def check_suite(manifest: Manifest, family: Any) -> dict[str, Any]:
    """The installed tasks the manifest names, after checking they hash to its suite_hash."""
    if manifest.env_version != family.version:
        raise SubmissionError(f"manifest.json: env_version is {manifest.env_version}, the installed "
                              f"{manifest.env_id} is version {family.version}")
    try:
        installed = {t.id: t for t in family.load_tasks(manifest.suite)}
    except PolarError as e:
        raise SubmissionError(f"manifest.json: suite {manifest.suite!r} cannot be loaded here: {e}") from None
    unknown = [t for t in manifest.tasks if t not in installed]
    if unknown:
        raise SubmissionError(f"manifest.json: tasks {', '.join(unknown)} are not in the installed suite "
                              f"{manifest.suite!r}")
    if len(set(manifest.tasks)) != len(manifest.tasks):
        raise SubmissionError("manifest.json: field tasks names a task twice")
    left_out = sorted(set(installed) - set(manifest.tasks))
    if left_out:
        raise SubmissionError(
            f"manifest.json: the run covers {len(manifest.tasks)} of the {len(installed)} tasks of suite "
            f"{manifest.suite!r} (it leaves out {', '.join(left_out[:5])}{' ...' if len(left_out) > 5 else ''}): a "
            "submission measures the whole suite; rerun `polar eval` without --tasks, or make a suite folder of the "
            "tasks you mean and pass it as --suite")
    tasks = {t: installed[t] for t in manifest.tasks}
    actual = suite_hash(list(tasks.values()))
    if actual != manifest.suite_hash:
        raise SubmissionError(f"manifest.json: suite_hash is {manifest.suite_hash}, but the installed tasks hash to "
                              f"{actual} (the suite changed since the run, or the hash was edited)")
    return tasks


def check_agreement(manifest: Manifest, traces: list[tuple[int, Trace]]) -> None:
    """Every trace was made by the env, suite, harness, sandbox, model and polar-gym the manifest names.

    (Not the policy's name: a trace records the policy object's own name, `scripted` for `--policy empty`.)
    """
    wanted = {"env_id": manifest.env_id, "env_version": manifest.env_version, "suite": manifest.suite,
              "sandbox": manifest.sandbox, "harness.name": manifest.harness.name,
              "harness.version": manifest.harness.version, "policy.model": manifest.model,
              "polar_version": manifest.polar_version}
    for lineno, t in traces:
        have = {"env_id": t.env_id, "env_version": t.env_version, "suite": t.suite, "sandbox": t.sandbox,
                "harness.name": t.harness.name, "harness.version": t.harness.version,
                "policy.model": t.policy.model if t.policy else None,
                "polar_version": t.polar_version}
        for field, value in wanted.items():
            if have[field] != value:
                raise SubmissionError(f"traces.jsonl:{lineno} (episode {t.episode_id}): {field} is {have[field]!r}, "
                                      f"manifest.json says {value!r}")


def check_rewards(family: Any, episodes: dict[Key, Trace]) -> None:
    """No recorded reward is more than the family's reward spec gives the recorded components (`Trace.reward_unearned`:
    a tampered episode keeps its components and pays 0)."""
    for key, trace in sorted(episodes.items()):
        try:
            why = trace.reward_unearned(family.reward)
        except ValueError as e:
            raise SubmissionError(f"traces.jsonl: {label(key, trace)}: {e}") from None
        if why:
            raise SubmissionError(f"traces.jsonl: {label(key, trace)}: {why}")


SCORED_SUMMARY = frozenset({"env_id", "harness", "policy", "model", "suite", "k", "tasks", "episodes",
                            "expected_episodes", "mean_reward", "components", "status_counts"})
"""What a submission's summary.json must state (with every pass@k): a descriptive field `polar eval` added since the
run was made may be absent, but every field present must be what the traces give."""
SCORED_RESULTS = frozenset({"task_id", "sample", "seed", "episode_id", "status", "reward"})
"""The results.parquet columns a submission must have (with every `component.*`), by the same rule."""


def check_outputs(directory: Path, manifest: Manifest, family: Any, episodes: dict[Key, Trace],
                  summary: dict[str, Any]) -> None:
    """summary.json and results.parquet are exactly what `polar eval` computes from these traces."""
    import pandas as pd

    run = EvalRun(directory, manifest.eval_settings(), dict(episodes))
    expected = json.loads(json.dumps(summarize(run, family.reward.outcome)))
    if isinstance(summary.get("status_counts"), dict):  # a status added since the run was made counts 0 there
        summary = {**summary, "status_counts": {s: n for s, n in summary["status_counts"].items() if n}}
        expected["status_counts"] = {s: n for s, n in expected["status_counts"].items() if n}
    for field in sorted(set(expected) | set(summary)):
        if field not in summary and field not in SCORED_SUMMARY and not field.startswith("pass@"):
            continue  # a descriptive field added to `polar eval` since the run was made (the bases it used, ...)
        if summary.get(field, "(absent)") != expected.get(field, "(absent)"):
            raise SubmissionError(f"summary.json: field {field} is {summary.get(field, '(absent)')!r}, the traces give "
                                  f"{expected.get(field, '(absent)')!r}")
    try:
        actual = pd.read_parquet(directory / "results.parquet")
    except Exception as e:  # pyarrow raises several unrelated types for a broken file
        raise SubmissionError(f"results.parquet: cannot be read: {e}") from None
    rows = results_rows(run)
    columns = sorted(set().union(*(row.keys() for row in rows)))
    columns = [c for c in columns if c in actual.columns or c in SCORED_RESULTS or c.startswith("component.")]
    if sorted(actual.columns) != columns:
        raise SubmissionError(f"results.parquet: columns are {sorted(actual.columns)}, the traces give {columns}")
    if len(actual) != len(rows):
        raise SubmissionError(f"results.parquet: {len(actual)} rows, the traces give {len(rows)}")
    for row, have in zip(rows, actual.sort_values(["task_id", "sample"]).to_dict("records"), strict=True):
        for column in columns:
            if not _same(have[column], row.get(column)):
                raise SubmissionError(f"results.parquet: episode {row['task_id']}#{row['sample']} field {column} is "
                                      f"{_plain(have[column])!r}, the traces give {_plain(row.get(column))!r}")


def check(path: Path) -> Checked:
    """Everything but re-grading, on a submission directory (see the module docstring)."""
    check_files(path)
    manifest = read_manifest(path)
    family = load_family(manifest.env_id)
    tasks = check_suite(manifest, family)
    traces = read_traces(path / "traces.jsonl")
    check_agreement(manifest, traces)
    episodes = match_episodes(traces, manifest.tasks, manifest.k, manifest.seed)
    check_rewards(family, episodes)
    summary = read_summary(path)
    check_outputs(path, manifest, family, episodes, summary)
    return Checked(manifest, family, tasks, episodes, summary)


UNISOLATED = "process"
"""The backend validation never uses: re-grading and replay run what a submitter wrote, and `process` runs it on this
machine, where it could rewrite the submission after its check, or polar itself."""


def validate(path: Path, *, regrade: bool = True, replay: bool = True, sandbox: str | None = None,
             jobs: int = 4) -> Checked:
    """`check`, then re-grade every episode's artefact and replay every episode's recorded replies, each in a fresh
    sandbox (the manifest's backend unless `sandbox`); last, the submission's bytes must be those checked."""
    from polar.leaderboard.regrade import regrade_episodes
    from polar.leaderboard.replay import replay_episodes

    before = _fingerprint(Path(path))
    with opened(path) as directory:
        checked = check(directory)
    backend = sandbox or checked.manifest.sandbox
    if (regrade or replay) and backend == UNISOLATED:
        raise SubmissionError(f"the run used the `{UNISOLATED}` sandbox, which does not isolate what it runs: "
                              "re-grading and replaying it would run the submission's commands on this machine. "
                              "Validate it with --sandbox local or --sandbox docker")
    for wanted, step, what in ((regrade, regrade_episodes, "re-grading"), (replay, replay_episodes, "replaying")):
        problems = step(checked, backend, jobs) if wanted else []
        if problems:
            more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
            raise SubmissionError(f"{what} disagrees with {len(problems)} episode(s): " + "; ".join(problems[:5])
                                  + more)
    if _fingerprint(Path(path)) != before:
        raise SubmissionError("its files changed while it was being validated: what was checked is not what is "
                              "there now. Validate a copy that nothing else can write")
    return checked


def _fingerprint(path: Path) -> dict[str, str]:
    """The sha256 of the tarball, or of each file in the directory (what `build` and a reader take as checked)."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(p.relative_to(path) if p != path else p.name): sha256(p) for p in files}


def _same(a: Any, b: Any) -> bool:
    a_missing = a is None or (isinstance(a, float) and math.isnan(a))
    b_missing = b is None or (isinstance(b, float) and math.isnan(b))
    if a_missing or b_missing:
        return a_missing and b_missing
    return _plain(a) == _plain(b)


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
