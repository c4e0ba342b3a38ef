"""polar/SWE-v0 oracle episodes per minute in the docker sandbox at concurrency 1, 4 and 16, measured in one run.

Each level is a `polar eval -j N` run, made the way the CLI makes it: `run_eval` with N workers, each owning one
env (`pool=1`, so its next container is started ahead), the built-in harness and the oracle policy (which
writes the gold patch and `git apply`s it through the `bash` tool), every episode graded by swebench in a
fresh container. The subset is the first four instances of each repository of `swe-mini` (16 instances, so
concurrency 16 runs them all at once), three rounds; `--quick` runs one instance per repository once. Rounds
alternate which level goes first; every episode must end with reward 1. Episodes per minute = episodes ÷ the
time from the start of the run to its last recorded episode × 60; the ratio is against concurrency 1 in the
same round set. Images are built beforehand (once per repository and engine, not per episode).

    bash scripts/docker.sh && python benchmarks/swe_throughput.py [--quick]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path

import gymnasium as gym
from swe_reset import subset
from timing import options, rotated, table, write

import polar.envs.registration
from polar.evaluation.evaluate import EvalRun, EvalSettings, run_eval, suite_hash
from polar.policies import OraclePolicy
from polar.trace import Trace

LEVELS = [1, 4, 16]
ENV_ID = "polar/SWE-v0"


def make_env(pool: int = 1) -> gym.Env:
    """An env as `polar eval` makes one for each of its workers."""
    return gym.make(ENV_ID, harness="builtin", sandbox="docker", max_turns=4, time_limit_s=600, pool=pool)


def one_run(jobs: int, task_ids: tuple[str, ...], tasks_hash: str) -> tuple[float, list[Trace]]:
    """(seconds to the last recorded episode, traces) of one `run_eval` at `jobs` episodes at once."""
    settings = EvalSettings(env_id=ENV_ID, harness="builtin", sandbox="docker", policy="oracle", model=None,
                            suite="swe-mini", suite_hash=tasks_hash, tasks=task_ids, k=1, seed=0, max_turns=4,
                            time_limit_s=600)
    last: list[float] = []
    with tempfile.TemporaryDirectory(prefix="polar-swe-bench-") as out:
        run = EvalRun.open(Path(out), settings)
        start = time.monotonic()
        asyncio.run(run_eval(run, make_env, OraclePolicy(), jobs, lambda _trace: last.append(time.monotonic())))
        traces = list(run.done.values())
    bad = [t for t in traces if t.reward != 1.0]
    if bad or len(traces) != len(task_ids):
        raise SystemExit(f"concurrency {jobs}: {len(traces)} episodes, not resolved: "
                         f"{[(t.task_id, t.status, t.error) for t in bad]}")
    return max(last) - start, traces


def seconds(trace: Trace) -> float:
    return (datetime.fromisoformat(trace.ended_at) - datetime.fromisoformat(trace.started_at)).total_seconds()


def main() -> None:
    args = options(__doc__.splitlines()[0])
    polar.envs.registration.register_envs()
    probe = make_env(pool=0).unwrapped
    tasks = subset(probe.tasks, 1 if args.quick else 4)
    rounds, load = (1 if args.quick else 3), round(os.getloadavg()[0], 2)
    started = time.monotonic()
    for task in subset(tasks, 1):
        probe.family.environment(task).build_image()
    build_s = time.monotonic() - started
    task_ids, tasks_hash = tuple(t.id for t in tasks), suite_hash(tasks)
    walls: dict[int, list[float]] = {n: [] for n in LEVELS}
    durations: dict[int, list[float]] = {n: [] for n in LEVELS}
    for r in range(rounds):
        for jobs in rotated(LEVELS, r):
            elapsed, traces = one_run(jobs, task_ids, tasks_hash)
            walls[jobs].append(round(elapsed, 1))
            durations[jobs] += [seconds(t) for t in traces]
            print(f"round {r + 1}: concurrency {jobs}: {len(traces)} episodes in {elapsed:.1f} s", flush=True)

    figures = {}
    for jobs in LEVELS:
        per_minute = round(len(durations[jobs]) / sum(walls[jobs]) * 60, 1)
        ordered = sorted(durations[jobs])
        figures[str(jobs)] = {"episodes": len(ordered), "wall_s_per_round": walls[jobs], "episodes_per_minute":
                              per_minute, "episode_median_s": round(statistics.median(ordered), 2),
                              "episode_p90_s": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 2)}
    base = figures["1"]["episodes_per_minute"]
    for f in figures.values():
        f["over_concurrency_1"] = round(f["episodes_per_minute"] / base, 2)
    print(table(["concurrency", "episodes", "episodes/min", "episode median s", "episode p90 s", "÷ concurrency 1"],
                [[j, f["episodes"], f["episodes_per_minute"], f["episode_median_s"], f["episode_p90_s"],
                  f"{f['over_concurrency_1']:.2f}×"] for j, f in figures.items()]))
    path = write("swe_throughput", args.out, {"quick": args.quick, "rounds": rounds, "loadavg_1m_at_start": load,
                                              "tasks": list(task_ids),
                                              "harness": "builtin", "sandbox": "docker", "policy": "oracle",
                                              "pool_per_worker": 1, "image_build_s": round(build_s, 1),
                                              "levels": figures})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
