"""`RecordTraces`: a Gymnasium wrapper that appends each finished episode's trace to a JSONL file.

Recording is a wrapper, as Gymnasium's `RecordEpisodeStatistics` is, rather than code in each runner: `polar run`
and a library user's own loop record through it. Every traces.jsonl (this wrapper, `polar eval`'s run, `polar train
grpo`'s) is written by `polar.trace.append_jsonl`, which fsyncs each line, so a process killed mid-run loses no
finished episode, and resumed by `polar.trace.keep_jsonl`. It records what passes through it, the last
step's `info["trace"]` from the env it wraps, so it composes with any other wrapper, inside or outside it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

from polar.envs.wrapper import PolarWrapper
from polar.trace import Trace, append_jsonl


class RecordTraces(PolarWrapper):
    """Wraps a polar env (or a wrapper around one); the sync and the asyncio API both record."""

    def __init__(self, env: gym.Env, path: str | Path, on_trace: Callable[[Trace], None] | None = None):
        super().__init__(env)
        self.path, self.on_trace = Path(path), on_trace

    def step(self, action: Any):
        result = self.env.step(action)
        self._record(result[4])
        return result

    async def astep(self, action: Any):
        result = await super().astep(action)
        self._record(result[4])
        return result

    def _record(self, info: dict[str, Any]) -> None:
        if (trace := info.get("trace")) is not None:
            append_jsonl(self.path, [trace])
            if self.on_trace is not None:
                self.on_trace(trace)
