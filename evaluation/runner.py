"""The one episode loop (`play_episode`, asyncio, with the sync facade `run_episode`) behind `polar run`,
`polar eval`, `polar tasks admit` and the benchmarks, and `run_episodes`, the loop of `polar run`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from polar import runtime
from polar.envs.polar_env import PolicyFailure
from polar.envs.recording import RecordTraces
from polar.envs.wrapper import async_env
from polar.protocols import Policy
from polar.trace import Named, Trace, read_jsonl, write_parquet
from polar.types import ModelReply


def task_order(task_ids: list[str], episodes: int, seed: int) -> list[str]:
    """A seeded shuffle of the tasks, cycled: `--episodes N` covers N distinct tasks when there are N."""
    order = list(np.random.default_rng(seed).permutation(task_ids))
    return [order[i % len(order)] for i in range(episodes)]


async def play_episode(env: gym.Env, policy: Policy, *, seed: int, task_id: str | None = None,
                       on_call: Callable[[], None] | None = None) -> Trace:
    """One episode from reset to the final step through the env's asyncio API (`async_env`, so through every polar
    wrapper stacked, `RecordTraces` included); the policy gets the task from `info` and runs on a worker thread, so
    many episodes can run at once in one loop. A policy that raises on a request (a prompt longer than its context, a
    server error) ends that episode with status `policy_error` and the message, and the caller goes on. `on_call` runs
    before each policy call (a progress display). Returns its trace, the last step's `info["trace"]`."""
    api = async_env(env)
    options: dict[str, Any] = {"policy": Named(name=policy.name, model=getattr(policy, "model", None))}
    if task_id is not None:
        options["task_id"] = task_id
    obs, info = await api.areset(seed=seed, options=options)
    while True:
        if on_call is not None:
            on_call()
        try:
            reply: ModelReply | PolicyFailure = await asyncio.to_thread(policy, obs, info["task"])
        except Exception as e:  # one request the policy cannot answer ends its episode, not the run
            reply = PolicyFailure(f"{type(e).__name__}: {e}")
        obs, _, terminated, truncated, info = await api.astep(reply)
        if terminated or truncated:
            return info["trace"]


def run_episode(env: gym.Env, policy: Policy, *, seed: int, task_id: str | None = None) -> Trace:
    """`play_episode` for sync callers."""
    return runtime.run(play_episode(env, policy, seed=seed, task_id=task_id))


def run_episodes(env: gym.Env, policy: Policy, *, episodes: int, seed: int = 0, out: Path | None = None,
                 on_episode: Callable[[Trace], None] | None = None) -> list[Trace]:
    """Run `episodes` episodes over a seeded task order; each trace goes to `out/traces.jsonl` as it ends."""
    if out is not None:
        env = RecordTraces(env, out / "traces.jsonl")
    traces = []
    for i, task_id in enumerate(task_order(env.unwrapped.task_ids, episodes, seed)):
        trace = run_episode(env, policy, seed=seed + i, task_id=task_id)
        traces.append(trace)
        if on_episode:
            on_episode(trace)
    if out is not None:
        write_parquet(out / "traces.parquet", read_jsonl(out / "traces.jsonl"))
    return traces
