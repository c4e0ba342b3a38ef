"""`polar eval`: every task × k samples, j episodes at once, resumable, summarised with unbiased pass@k.

Each finished episode is appended to `traces.jsonl` and fsynced before the next one is counted, so a run
killed at any moment loses only the episodes in flight; rerunning the same command skips what is done. The
settings live in `run.json`, and a resume with different settings is refused, naming the difference.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import zlib
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from polar import __version__
from polar.errors import PolarError
from polar.evaluation.runner import play_episode
from polar.evaluation.stats import pass_at_k
from polar.trace import STATUSES, Trace, append_jsonl, keep_jsonl, write_parquet


@dataclass(frozen=True)
class EvalSettings:
    """Everything that decides an eval's results; a resume must match it exactly."""

    env_id: str
    harness: str
    sandbox: str
    policy: str
    model: str | None
    suite: str | None
    suite_hash: str
    tasks: tuple[str, ...]
    k: int
    seed: int
    max_turns: int
    time_limit_s: float | None
    """None: each task's own budget (`PolarEnv`)."""
    polar_version: str = __version__


def episode_seed(base: int, task_id: str, sample: int) -> int:
    """A stable seed per (task, sample), the same on every machine and every resume."""
    return (base * 1_000_003 + zlib.crc32(f"{task_id}#{sample}".encode())) % (2**31)


@dataclass
class EvalRun:
    out: Path
    settings: EvalSettings
    done: dict[tuple[str, int], Trace] = field(default_factory=dict)

    @classmethod
    def open(cls, out: Path, settings: EvalSettings) -> EvalRun:
        """Create the run directory, or reopen it for a resume after checking the settings match."""
        out.mkdir(parents=True, exist_ok=True)
        manifest = out / "run.json"
        wanted = json.loads(json.dumps(asdict(settings)))
        if manifest.exists():
            have = json.loads(manifest.read_text())
            for key in wanted:
                if have.get(key) != wanted[key]:
                    raise PolarError(f"{out} holds a run with {key}={have.get(key)!r}, not {wanted[key]!r}; "
                                     "results with different settings are not mixed: pass another --out")
        else:
            manifest.write_text(json.dumps(wanted, indent=2) + "\n")
        run = cls(out, settings)
        run._load()
        return run

    def _load(self) -> None:
        seeds = {episode_seed(self.settings.seed, t, s): (t, s) for t in self.settings.tasks
                 for s in range(self.settings.k)}
        for trace in keep_jsonl(self.out / "traces.jsonl"):  # a line cut short by a kill is dropped
            key = seeds.get(trace.seed)
            if key is not None and key[0] == trace.task_id:
                self.done[key] = trace

    def todo(self) -> list[tuple[str, int]]:
        return [(t, s) for s in range(self.settings.k) for t in self.settings.tasks if (t, s) not in self.done]

    def record(self, task_id: str, sample: int, trace: Trace) -> None:
        append_jsonl(self.out / "traces.jsonl", [trace])
        self.done[(task_id, sample)] = trace


def summarize(run: EvalRun, outcome: str) -> dict[str, Any]:
    """summary.json: pass@1 and unbiased pass@k, mean reward and components, turns, tokens, time, statuses.

    `components` are the raw values' means, `components_scored` the means of what each added to the reward
    (weighted, capped: `RewardSpec.contributions`). `wall_time_s` is elapsed time, while at least one episode
    ran (so a resume gives the same figure); `episode_time_s` sums the episodes' own times. `base_images`: each
    base image a task's Dockerfile named, with the images it was built on (polar's offline stand-in where none could
    be had), as the episodes' verifier logs record them."""
    from polar.envs.registration import ENVS, env_family
    from polar.envs.sandbox.dockerfile.build import bases_in_log

    traces = list(run.done.values())
    k = run.settings.k
    per_task: dict[str, list[bool]] = {}
    for (task_id, _), trace in run.done.items():
        per_task.setdefault(task_id, []).append(trace.solved(outcome))
    ks = sorted({1, k, *(2**i for i in range(1, 8) if 2**i < k)})
    passes = {f"pass@{j}": _mean([pass_at_k(len(v), sum(v), j) for v in per_task.values() if len(v) >= j])
              for j in ks}
    components = sorted({c for t in traces for c in t.reward_components})
    seconds = [_duration(t) for t in traces]
    spec = env_family(run.settings.env_id).reward if run.settings.env_id in ENVS else None
    scored = [spec.contributions(t.reward_components) for t in traces] if spec else []
    bases: dict[str, set[str]] = {}
    for t in traces:
        for written, used in bases_in_log(t.verifier_log).items():
            bases.setdefault(written, set()).add(used)
    return {
        "env_id": run.settings.env_id, "harness": run.settings.harness, "policy": run.settings.policy,
        "model": run.settings.model, "suite": run.settings.suite, "k": k, "tasks": len(run.settings.tasks),
        "episodes": len(traces), "expected_episodes": len(run.settings.tasks) * k, **passes,
        "mean_reward": _mean([t.reward for t in traces]),
        "components": {c: _mean([t.reward_components.get(c, 0.0) for t in traces]) for c in components},
        "components_scored": {c: _mean([v.get(c, 0.0) for v in scored]) for c in components} if spec else {},
        "mean_turns": _mean([len(t.turns) for t in traces]),
        "tokens": sum(len(turn.reply.token_ids or ()) for t in traces for turn in t.turns),
        "wall_time_s": _elapsed(traces), "episode_time_s": round(sum(seconds), 3), "mean_episode_s": _mean(seconds),
        "status_counts": {s: sum(t.status == s for t in traces) for s in STATUSES},
        "base_images": {written: sorted(used) for written, used in sorted(bases.items())},
    }


def results_rows(run: EvalRun) -> list[dict[str, Any]]:
    rows = []
    for (task_id, sample), t in sorted(run.done.items()):
        rows.append({"task_id": task_id, "sample": sample, "seed": t.seed, "episode_id": t.episode_id,
                     "status": t.status, "reward": t.reward, "turns": len(t.turns),
                     "tokens": sum(len(turn.reply.token_ids or ()) for turn in t.turns),
                     "wall_time_s": _duration(t), "harness": t.harness.name, "policy": run.settings.policy,
                     "model": run.settings.model,
                     **{f"component.{c}": v for c, v in t.reward_components.items()}})
    return rows


def write_outputs(run: EvalRun, outcome: str) -> dict[str, Any]:
    import pandas as pd

    summary = summarize(run, outcome)
    (run.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    pd.DataFrame(results_rows(run)).to_parquet(run.out / "results.parquet", index=False)
    ordered = [run.done[key] for key in sorted(run.done)]
    write_parquet(run.out / "traces.parquet", ordered)
    return summary


async def run_eval(run: EvalRun, make_env, policy, jobs: int, progress=None, on_call=None) -> None:
    """Run every episode still to do, `jobs` at a time; each worker owns one env (and so one sandbox).
    `progress(trace)` runs as each episode ends, `on_call()` before each model call."""
    queue: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
    for item in run.todo():
        queue.put_nowait(item)

    async def worker() -> None:
        env: gym.Env = make_env()
        try:
            while not queue.empty():
                task_id, sample = queue.get_nowait()
                seed = episode_seed(run.settings.seed, task_id, sample)
                trace = await play_episode(env, policy, seed=seed, task_id=task_id, on_call=on_call)
                run.record(task_id, sample, trace)
                if progress is not None:
                    progress(trace)
        finally:
            await asyncio.to_thread(env.close)

    await asyncio.gather(*(worker() for _ in range(max(1, min(jobs, queue.qsize())))))


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def _duration(trace: Trace) -> float:
    from datetime import datetime

    return round((datetime.fromisoformat(trace.ended_at) - datetime.fromisoformat(trace.started_at)).total_seconds(), 3)


def _elapsed(traces: list[Trace]) -> float:
    """Seconds during which at least one of these episodes ran: the union of their [start, end] spans."""
    from datetime import datetime

    spans = sorted((datetime.fromisoformat(t.started_at), datetime.fromisoformat(t.ended_at)) for t in traces)
    total, end = 0.0, None
    for start, stop in spans:
        if end is None or start > end:
            total, end = total + (stop - start).total_seconds(), stop
        elif stop > end:
            total, end = total + (stop - end).total_seconds(), stop
    return round(total, 3)


def suite_hash(tasks: list[Any]) -> str:
    """A content hash of the tasks (statements, files, tests), so results name exactly what they measured."""
    digest = hashlib.sha256()
    for task in sorted(tasks, key=lambda t: t.id):
        record = _hash_record(task) if is_dataclass(task) else repr(task)
        digest.update(json.dumps(record, sort_keys=True, default=_content_digest).encode())
    return digest.hexdigest()[:16]


def _hash_record(task: Any) -> dict[str, Any]:
    """A task's fields, less those left at their declared default: adding an optional field to a task format
    leaves every suite that does not set it hashing as before, so earlier submissions still validate."""
    record = asdict(task)
    for spec in fields(task):
        if spec.default is not MISSING and getattr(task, spec.name) == spec.default:
            del record[spec.name]
    return record


def _content_digest(value: Any) -> str:
    """What a task field holding bytes or a path contributes to the suite hash: its content, never where it lies
    on this machine, so the same suite hashes the same everywhere."""
    if isinstance(value, bytes):
        return hashlib.sha256(value).hexdigest()
    if isinstance(value, Path):
        files = sorted(p for p in value.rglob("*") if p.is_file()) if value.is_dir() else [value]
        inner = hashlib.sha256()
        for path in filter(Path.is_file, files):
            inner.update(f"{path.relative_to(value) if value.is_dir() else path.name}\0".encode() + path.read_bytes())
        return inner.hexdigest()
    raise TypeError(f"a task field of type {type(value).__name__} cannot be hashed into the suite hash")
