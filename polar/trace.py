"""The trace spec `polar.trace/v1`: one episode, token-exact, as JSONL (one episode a line) and Parquet.

The JSON Schema shipped beside this file (`trace.schema.json`) is generated from these types by
`python -m polar.trace` and checked against them in the tests, so every trace the project writes validates.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from polar.reward import RewardSpec
from polar.types import ModelReply, ModelRequest

SCHEMA_ID = "polar.trace/v1"
SCHEMA_PATH = Path(__file__).with_name("trace.schema.json")

Status = Literal["completed", "truncated", "timeout", "harness_error", "sandbox_error", "policy_error",
                 "verifier_error", "tampered"]
"""`policy_error`: the policy could not answer a model call (a prompt longer than the model's context, a server error;
the message in `error`), so the episode ended there and was graded as it stood. `tampered`: the grader found that the
agent changed what grading executes (reward 0, the finding in `error`)."""
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
UNPAID: tuple[str, ...] = ("verifier_error", "sandbox_error", "tampered")
"""The statuses whose reward is 0 whatever the components say: grading failed, or found tampering."""


class Turn(BaseModel):
    """One model call: the harness's request, the policy's reply, and how long each side took."""

    model_config = ConfigDict(extra="forbid")

    index: int
    request: ModelRequest
    reply: ModelReply
    policy_latency_s: float | None = Field(default=None, description="from the observation to the step call")
    env_latency_s: float = Field(description="from the step call to the next request (tools, harness)")


class Named(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str | None = None
    model: str | None = None


class Trace(BaseModel):
    """One whole episode."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_id: Literal["polar.trace/v1"] = Field(default=SCHEMA_ID, alias="schema")
    episode_id: str
    env_id: str
    env_version: int
    task_id: str
    suite: str | None = None
    harness: Named
    sandbox: str
    policy: Named | None = None
    seed: int | None = None
    started_at: str
    ended_at: str
    status: Status
    error: str | None = Field(default=None, description="what went wrong, for any status but completed")
    turns: list[Turn]
    verifier_log: str = ""
    artefact: dict[str, Any] | None = Field(default=None, description="what the agent produced, re-gradable")
    reward: float
    reward_components: dict[str, float]
    polar_version: str
    node: str | None = Field(default=None, description="the id of the Ray node the episode ran on "
                             "(`polar eval --ray`); None for a local run")

    def solved(self, outcome: str) -> bool:
        """Whether the episode solved its task (`solved_by`)."""
        return bool(solved_by(self.reward, self.reward_components.get(outcome, 0.0)))

    def reward_unearned(self, spec: RewardSpec) -> str | None:
        """Why the reward cannot have come from the components under `spec` (the env's reward spec), or None.

        It is at most what the components score, and 0 at an `UNPAID` status. It may be less: a grade that failed
        after counting its components pays 0 at any status (a harness error graded as it stood, then a grading
        error), and a grade that found tampering keeps the components it measured. `polar trace validate` and the
        leaderboard both check this."""
        allowed = 0.0 if self.status in UNPAID else spec.score(self.reward_components)
        if self.reward > allowed + 1e-9:
            return (f"reward {self.reward:g} exceeds what its components give under {self.env_id}'s reward spec "
                    f"({allowed:g} for status {self.status})")
        return None

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)


def solved_by(reward: Any, outcome_value: Any) -> Any:
    """The pass rule pass@k, the report and the leaderboard count by: the outcome component reached 1 and nothing
    zeroed the reward (tampering, a grading error). Elementwise on pandas columns as on floats."""
    return (reward > 0.0) & (outcome_value >= 1.0)


def json_schema() -> dict[str, Any]:
    schema = Trace.model_json_schema(by_alias=True)
    schema["$id"] = SCHEMA_ID
    return schema


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text())


def append_jsonl(path: Path, traces: Iterable[Trace]) -> None:
    """Append one line per trace and fsync it: the one JSONL writer, so a killed process loses no written trace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        for trace in traces:
            f.write(trace.to_json() + "\n")
            f.flush()
            os.fsync(f.fileno())


def keep_jsonl(path: Path, keep: Callable[[Trace], bool] = lambda trace: True) -> list[Trace]:
    """The traces of `path` that a resumed run keeps: every whole line up to the first broken one (a line cut short
    by a kill, and everything after it), less those `keep` refuses. When that drops anything the file is rewritten
    to hold exactly them, through a new file renamed over it, so a kill during the rewrite loses nothing."""
    path = Path(path)
    if not path.is_file():
        return []
    kept, dropped = [], False
    with path.open("rb") as f:
        for line in f:
            try:
                trace = Trace.model_validate_json(line)
            except ValueError:
                dropped = True
                break
            if keep(trace):
                kept.append(trace)
            else:
                dropped = True
    if dropped:
        staged = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        staged.unlink(missing_ok=True)
        append_jsonl(staged, kept)  # creates the file even when nothing is kept
        os.replace(staged, path)
    return kept


def read_jsonl(path: Path) -> Iterator[Trace]:
    """Yield each trace; a broken line raises ValueError naming the file and line."""
    with Path(path).open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield Trace.model_validate_json(line)
            except ValueError as e:
                raise ValueError(f"{path}:{lineno}: not a valid {SCHEMA_ID} trace: {e}") from None


def write_parquet(path: Path, traces: Iterable[Trace]) -> None:
    """One row per episode: the scalar fields as columns, the components and turns as JSON text."""
    import pandas as pd

    rows = []
    for t in traces:
        rows.append(
            {
                "episode_id": t.episode_id,
                "env_id": t.env_id,
                "task_id": t.task_id,
                "harness": t.harness.name,
                "sandbox": t.sandbox,
                "policy": t.policy.name if t.policy else None,
                "model": t.policy.model if t.policy else None,
                "seed": t.seed,
                "status": t.status,
                "reward": t.reward,
                "num_turns": len(t.turns),
                "reward_components": json.dumps(t.reward_components),
                "started_at": t.started_at,
                "ended_at": t.ended_at,
                "node": t.node,
                "trace": t.to_json(),
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(path, index=False)


if __name__ == "__main__":
    SCHEMA_PATH.write_text(json.dumps(json_schema(), indent=2, sort_keys=True) + "\n")
    print(f"wrote {SCHEMA_PATH}")
