"""Dataset rows for verl's `RLHFDataset`, one per task: which episode a rollout of that row runs.

verl reads the columns `data_source` (the reward key: the env id), `prompt` (chat messages; here only the
task's instruction, for verl's logs and length filter — the harness builds the real prompt), `agent_name`
(which agent loop runs the row: `polar_env`), `reward_model` (verl's validation logs read its `ground_truth`;
the env grades, so it holds the task id) and `extra_info` (handed to the agent loop: the `EpisodeSpec` fields
plus verl's `index`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

from polar.errors import PolarError

AGENT_NAME = "polar_env"


class RowError(PolarError, ValueError):
    """A dataset row names an env, task or field the installed polar does not have; the message names the row."""


@dataclass(frozen=True)
class EpisodeSpec:
    """Which episode one rollout runs: a row's `extra_info`, less verl's own keys."""

    env_id: str
    """A registered env id, e.g. `polar/Code-v0`."""
    task_id: str
    """A task of that env's suite; every rollout of the row runs this task."""
    suite: str | None = None
    """The env's suite (a bundled name or a directory); None for the env's default."""
    harness: str = "builtin"
    """The agent harness that drives the episode (`builtin`, `pi`, `mini-swe-agent`, ...)."""
    sandbox: str = "local"
    """Where the agent's commands run (`local` = bubblewrap, `docker`, `process`)."""
    seed: int = 0
    """The row's seed. Each rollout resets with `seed * 2**20 + a fresh 20-bit draw`, so the `rollout.n`
    samples of a GRPO group are distinct episodes and `trace.seed >> 20` still names the row's seed."""
    max_turns: int = 30
    """Model calls before the episode is truncated."""
    time_limit_s: float = 900.0
    """Wall-clock budget of one episode."""

    @classmethod
    def from_row(cls, extra_info: Any, where: str) -> EpisodeSpec:
        """Read a row's `extra_info`; a missing or mistyped field raises RowError naming `where`."""
        if not isinstance(extra_info, dict):
            raise RowError(f"{where}: extra_info must be a dict with env_id and task_id, "
                           f"got {type(extra_info).__name__}")
        values: dict[str, Any] = {}
        for name in (f.name for f in fields(cls)):
            value = extra_info.get(name)
            if value is None:
                if name in ("env_id", "task_id"):
                    raise RowError(f"{where}: extra_info has no {name!r} (rows come from `polar train data`)")
                continue
            values[name] = _coerce(name, value, where)
        return cls(**values)

    def with_overrides(self, **overrides: Any) -> EpisodeSpec:
        """This spec with every override that is not None."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


def _coerce(name: str, value: Any, where: str) -> Any:
    kinds: dict[str, type] = {"seed": int, "max_turns": int, "time_limit_s": float}
    kind = kinds.get(name, str)
    try:
        if kind is not str and isinstance(value, bool | str):
            raise TypeError
        return kind(value)
    except (TypeError, ValueError):
        raise RowError(f"{where}: extra_info[{name!r}] must be {kind.__name__}, got {value!r}") from None


def _family(env_id: str) -> Any:
    """The env family behind an env id, without building an env (so no sandbox backend is needed)."""
    from polar.envs.registration import env_family

    return env_family(env_id)()


@cache
def task_ids(env_id: str, suite: str | None) -> tuple[str, ...]:
    """The task ids of an env's suite, loaded once per process."""
    return tuple(task.id for task in _family(env_id).load_tasks(suite))


def check_spec(spec: EpisodeSpec, where: str) -> None:
    """Raise RowError naming `where` when the env id, suite or task id is not one this polar knows."""
    try:
        known = task_ids(spec.env_id, spec.suite)
    except PolarError as e:
        raise RowError(f"{where}: {e}") from None
    if spec.task_id not in known:
        suite = f"suite {spec.suite!r}" if spec.suite else "its default suite"
        raise RowError(f"{where}: {spec.env_id} has no task {spec.task_id!r} in {suite} ({len(known)} tasks, "
                       f"e.g. {', '.join(known[:5])}); regenerate the rows with `polar train data`")


def dataset_rows(env_id: str, *, suite: str | None = None, tasks: list[str] | None = None, harness: str = "builtin",
                 sandbox: str = "local", seed: int = 0, max_turns: int = 30, time_limit_s: float = 900.0) -> list[dict]:
    """One row per task of the suite (or per id in `tasks`, in that order); unknown ids raise RowError."""
    family = _family(env_id)
    by_id = {task.id: task for task in family.load_tasks(suite)}
    chosen = tasks if tasks is not None else list(by_id)
    rows = []
    for index, task_id in enumerate(chosen):
        spec = EpisodeSpec(env_id=env_id, task_id=task_id, suite=suite or family.default_suite, harness=harness,
                           sandbox=sandbox, seed=seed + index, max_turns=max_turns, time_limit_s=time_limit_s)
        if task_id not in by_id:
            check_spec(spec, f"row {index}")
        instruction = getattr(by_id[task_id], "instruction", None) or f"Solve task {task_id}."
        rows.append({
            "data_source": env_id,
            "prompt": [{"role": "user", "content": instruction}],
            "agent_name": AGENT_NAME,
            "reward_model": {"style": "env", "ground_truth": task_id},
            "extra_info": {"index": index, **asdict(spec)},
        })
    return rows


def write_rows(rows: list[dict], path: Path) -> None:
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(path, index=False)


def read_rows(path: Path) -> list[dict]:
    """The rows of a parquet file as plain Python values."""
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def check_rows(rows: list[dict], source: str = "rows") -> None:
    """Every row must name an agent loop, an env and a task this polar knows; the first that does not raises."""
    for position, row in enumerate(rows):
        extra = row.get("extra_info")
        index = extra.get("index", position) if isinstance(extra, dict) else position
        where = f"{source}: row {index} (data_source={row.get('data_source')!r})"
        if row.get("agent_name") not in (None, AGENT_NAME):
            continue  # a row for another agent loop: not ours to check
        spec = EpisodeSpec.from_row(extra, where)
        if row.get("data_source") not in (None, spec.env_id):
            raise RowError(f"{where}: data_source differs from extra_info's env_id {spec.env_id!r}")
        check_spec(spec, where)
