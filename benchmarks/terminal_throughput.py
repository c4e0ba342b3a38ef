"""polar/Terminal-v0 oracle episodes per minute, in the local and the docker sandbox, measured in one run.

Each round runs every task of the bundled `terminal-mini` suite once in each sandbox, one episode at a time,
with the built-in harness and the oracle policy (which writes `solution/` and runs `solve.sh`, so every
episode ends with reward 1; the script stops if one does not). The sandbox that goes first alternates between
rounds. Images are built before the clock starts: a build happens once per task and engine, not per episode.
An episode is timed from `reset` (sandbox start and the task's setup: the image's container in docker, the
Dockerfile's replay in local) to the last `step` (which runs the task's tests); reset and that grading step
are also reported apart. Episodes per minute = episodes / their summed wall time × 60.

    python benchmarks/terminal_throughput.py [--quick]
"""

from __future__ import annotations

import time

import gymnasium as gym
from timing import options, rotated, summary, table, write

import polar.envs.registration
from polar.policies import OraclePolicy
from polar.tasks.harbor import load_suite

SANDBOXES = ["local", "docker"]


def build_images() -> float:
    """Build (or find) every task's image before timing; returns the seconds it took."""
    import docker

    from polar.envs.sandbox.dockerfile.build import image_for_dockerfile

    client, start = docker.from_env(), time.monotonic()
    for task in load_suite():
        image_for_dockerfile(client, str(task.dockerfile), task.docker_image)
    return time.monotonic() - start


def episode(env: gym.Env, policy: OraclePolicy, task_id: str, samples: dict[str, list[int]]) -> None:
    start = time.perf_counter_ns()
    obs, info = env.reset(seed=0, options={"task_id": task_id, "policy": {"name": "oracle"}})
    samples["reset"].append(time.perf_counter_ns() - start)
    while True:
        reply = policy(obs, info["task"])
        before = time.perf_counter_ns()
        obs, reward, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            samples["grading step"].append(time.perf_counter_ns() - before)
            break
    samples["episode"].append(time.perf_counter_ns() - start)
    if reward != 1.0:
        raise SystemExit(f"{task_id} in {env.unwrapped.sandbox_name}: reward {reward} ({info['status']}): "
                         f"{info['trace'].error or info['trace'].verifier_log[-1000:]}")


def main() -> None:
    args = options(__doc__.splitlines()[0])
    polar.envs.registration.register_envs()
    build_s = build_images()
    envs = {name: gym.make("polar/Terminal-v0", sandbox=name, max_turns=8, time_limit_s=300) for name in SANDBOXES}
    task_ids = envs["local"].unwrapped.task_ids
    rounds = 1 if args.quick else 3
    if args.quick:
        task_ids = task_ids[:4]
    samples = {name: {"reset": [], "grading step": [], "episode": []} for name in SANDBOXES}
    policy = OraclePolicy()
    try:
        for r in range(rounds):
            for name in rotated(SANDBOXES, r):
                for task_id in task_ids:
                    episode(envs[name], policy, task_id, samples[name])
    finally:
        for env in envs.values():
            env.close()

    figures, rows = {}, []
    for name in SANDBOXES:
        total_s = sum(samples[name]["episode"]) / 1e9
        per_minute = round(len(samples[name]["episode"]) / total_s * 60, 1)
        stats = {part: summary(s, "ms") for part, s in samples[name].items()}
        figures[name] = {"episodes": len(samples[name]["episode"]), "episodes_per_minute": per_minute,
                         "total_s": round(total_s, 1), **stats}
        rows.append([name, figures[name]["episodes"], per_minute, stats["episode"]["median_ms"],
                     stats["episode"]["p90_ms"], stats["reset"]["median_ms"], stats["grading step"]["median_ms"]])
    ratio = round(figures["local"]["episodes_per_minute"] / figures["docker"]["episodes_per_minute"], 2)
    print(table(["sandbox", "episodes", "episodes/min", "episode median ms", "episode p90 ms", "reset median ms",
                 "grading step median ms"], rows))
    print(f"\nlocal ÷ docker episodes per minute: {ratio}×  (images built or found beforehand in {build_s:.1f} s)")
    path = write("terminal_throughput", args.out, {"quick": args.quick, "rounds": rounds, "tasks": task_ids,
                                                   "harness": "builtin", "policy": "oracle", "concurrency": 1,
                                                   "image_build_s": round(build_s, 1), "sandboxes": figures,
                                                   "local_over_docker": ratio})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
