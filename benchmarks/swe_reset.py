"""polar/SWE-v0 reset latency in the docker sandbox: a cold container per reset vs one the pool started ahead.

Two envs run the same oracle episodes with the built-in harness: `pool=0` starts a fresh container of the
instance's image at every `reset` (`backend.start`), `pool=1` wraps the backend in `PooledBackend`, which hands
out a container started in the background while the previous episode ran (grading draws from the same pool).
A reset is timed from the call to the first model request: container start (or hand-out), unpacking the
repository at base_commit into /testbed, the harness's first request. A bare `DockerBackend.start` of the same
image (then stopped) is a reference row. The subset is two instances per repository of `swe-mini` (one with
`--quick`). Images are built and the pools filled by an untimed warm-up episode per repository before the
clock starts; rounds then alternate which env goes first, and every episode must end with reward 1.

    bash scripts/docker.sh && python benchmarks/swe_reset.py [--quick]
"""

from __future__ import annotations

import os
import time

import gymnasium as gym
from timing import options, rotated, summary, table, write

import polar.envs.registration
from polar import runtime
from polar.envs.sandbox import make_backend
from polar.policies import OraclePolicy
from polar.tasks.swe import SweTask

COLD, POOLED, START = "cold container (pool=0)", "pooled container (pool=1)", "bare DockerBackend.start (ref.)"


def subset(tasks: list[SweTask], per_repo: int) -> list[SweTask]:
    """The first `per_repo` instances of each repository, grouped by repository."""
    chosen: dict[str, list[SweTask]] = {}
    for task in tasks:
        if len(chosen.setdefault(task.repo, [])) < per_repo:
            chosen[task.repo].append(task)
    return [t for group in chosen.values() for t in group]


def timed_episode(env: gym.Env, policy: OraclePolicy, task: SweTask) -> tuple[int, int]:
    """(reset ns, whole episode ns) of one oracle episode; stops the run if it is not resolved."""
    start = time.perf_counter_ns()
    obs, info = env.reset(seed=0, options={"task_id": task.id, "policy": {"name": "oracle"}})
    reset_ns = time.perf_counter_ns() - start
    while True:
        obs, reward, terminated, truncated, info = env.step(policy(obs, info["task"]))
        if terminated or truncated:
            break
    if reward != 1.0:
        raise SystemExit(f"{task.id}: reward {reward} ({info['status']}): "
                         f"{info['trace'].error or info['trace'].verifier_log[-1000:]}")
    return reset_ns, time.perf_counter_ns() - start


def bare_start(backend, spec) -> int:
    """Nanoseconds of one `backend.start(spec)` (the container is stopped untimed)."""
    start = time.perf_counter_ns()
    sandbox = runtime.run(backend.start(spec))
    elapsed = time.perf_counter_ns() - start
    runtime.run(sandbox.stop())
    return elapsed


def main() -> None:
    args = options(__doc__.splitlines()[0])
    polar.envs.registration.register_envs()
    envs = {name: gym.make("polar/SWE-v0", harness="builtin", sandbox="docker", max_turns=4, time_limit_s=300,
                           pool=pool) for name, pool in ((COLD, 0), (POOLED, 1))}
    family = envs[COLD].unwrapped.family
    tasks = subset(envs[COLD].unwrapped.tasks, 1 if args.quick else 2)
    rounds, load = (1 if args.quick else 3), round(os.getloadavg()[0], 2)
    backend, policy = make_backend("docker"), OraclePolicy()
    samples: dict[str, dict[str, list[int]]] = {n: {"reset": [], "episode": []} for n in envs}
    samples[START] = {"start": []}
    try:
        started = time.monotonic()
        for task in subset(tasks, 1):  # images built, caches and pools filled: untimed
            family.environment(task).build_image()
            for env in envs.values():
                timed_episode(env, policy, task)
        warmup_s = time.monotonic() - started
        for r in range(rounds):
            for name in rotated([COLD, POOLED, START], r):
                for task in tasks:
                    if name == START:
                        samples[START]["start"].append(bare_start(backend, family.sandbox_spec(task, "docker")))
                    else:
                        reset_ns, episode_ns = timed_episode(envs[name], policy, task)
                        samples[name]["reset"].append(reset_ns)
                        samples[name]["episode"].append(episode_ns)
    finally:
        for env in envs.values():
            env.close()

    figures = {name: {part: summary(s, "ms") for part, s in parts.items()} for name, parts in samples.items()}
    pooled = figures[POOLED]["reset"]["median_ms"]
    rows = []
    for name, f in figures.items():
        ready = f.get("reset") or f["start"]  # the reference row has a start, not a reset
        rows.append([name, ready["median_ms"], ready["p90_ms"], ready["n"], f["episode"]["median_ms"] if "episode"
                     in f else "", f"{ready['median_ms'] / pooled:.2f}×"])
    print(table(["contender", "reset (start) median ms", "p90 ms", "n", "episode median ms", "÷ pooled"], rows))
    ratio = round(figures[COLD]["reset"]["median_ms"] / pooled, 2)
    print(f"\ncold ÷ pooled reset (median): {ratio}×  (warm-up, untimed: {warmup_s:.1f} s)")
    path = write("swe_reset", args.out, {"quick": args.quick, "rounds": rounds, "loadavg_1m_at_start": load,
                                         "tasks": [t.id for t in tasks],
                                         "harness": "builtin", "sandbox": "docker", "policy": "oracle",
                                         "warmup_s": round(warmup_s, 1), "contenders": figures,
                                         "cold_over_pooled": ratio})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
