"""Run episodes of one env with one policy and write their traces: the loops behind `polar run` (sync) and
`polar eval` and `polar tasks admit` (asyncio, many at once)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from polar.trace import Trace, append_jsonl, read_jsonl, write_parquet


def task_order(task_ids: list[str], episodes: int, seed: int) -> list[str]:
    """A seeded shuffle of the tasks, cycled: `--episodes N` covers N distinct tasks when there are N."""
    order = list(np.random.default_rng(seed).permutation(task_ids))
    return [order[i % len(order)] for i in range(episodes)]


def run_episode(env: gym.Env, policy: Callable, *, seed: int, task_id: str | None = None) -> Trace:
    """One episode from reset to the final step; returns its trace."""
    options: dict[str, Any] = {"policy": {"name": policy.name, "model": getattr(policy, "model", None)}}
    if task_id is not None:
        options["task_id"] = task_id
    obs, info = env.reset(seed=seed, options=options)
    while True:
        reply = policy(obs, env.unwrapped.current_task)
        obs, _, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            return info["trace"]


async def play_episode(env: gym.Env, policy: Callable, *, seed: int, options: dict[str, Any]) -> Trace:
    """One episode through the env's asyncio API (`areset`/`astep`); the policy runs on a worker thread, so many
    episodes can run at once in one loop. Returns its trace."""
    obs, _ = await env.unwrapped.areset(seed=seed, options=options)
    while True:
        reply = await asyncio.to_thread(policy, obs, env.unwrapped.current_task)
        obs, _, terminated, truncated, info = await env.unwrapped.astep(reply)
        if terminated or truncated:
            return info["trace"]


def run_episodes(env: gym.Env, policy: Callable, *, episodes: int, seed: int = 0, out: Path | None = None,
                 on_episode: Callable[[Trace], None] | None = None) -> list[Trace]:
    """Run `episodes` episodes over a seeded task order; append each trace to `out/traces.jsonl` as it ends."""
    traces = []
    for i, task_id in enumerate(task_order(env.unwrapped.task_ids, episodes, seed)):
        trace = run_episode(env, policy, seed=seed + i, task_id=task_id)
        traces.append(trace)
        if out is not None:
            append_jsonl(out / "traces.jsonl", [trace])
        if on_episode:
            on_episode(trace)
    if out is not None:
        write_parquet(out / "traces.parquet", read_jsonl(out / "traces.jsonl"))
    return traces
