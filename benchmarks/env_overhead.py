"""What `polar/Code-v0` adds on top of the sandbox: `reset`, `step` and the grading step, timed apart.

A scripted policy answers every model call with a `bash` tool call running `true` (a shell builtin, so the
command itself costs next to nothing) and ends each episode with `submit`. So a step's time is the env, the
built-in harness and one sandbox round trip; it is reported as a ratio to that raw round trip, made the same
way (`polar.runtime.run(sandbox.exec("true"))` from this thread, as `env.step` is) in the same run.
mini-swe-agent's `LocalEnvironment.execute` of `true` is the figure a user would compare a step to. Each
round is one episode plus a batch of each peer, in an order that rotates between rounds.

    python benchmarks/env_overhead.py [--quick]
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import gymnasium as gym
from timing import atime_calls, options, rotated, summary, table, time_calls, write

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")  # mini-swe-agent prints a banner on import otherwise
from minisweagent.environments.local import LocalEnvironment  # noqa: E402

import polar.envs.registration  # noqa: E402
from polar import runtime  # noqa: E402
from polar.envs.sandbox import make_backend  # noqa: E402
from polar.errors import TaskFormatError  # noqa: E402
from polar.protocols import SandboxSpec  # noqa: E402
from polar.tasks.code import BUNDLED, load_task  # noqa: E402
from polar.types import ModelReply, ToolCall  # noqa: E402

BASH_TRUE = ModelReply(tool_calls=[ToolCall(name="bash", arguments='{"command": "true"}')])
SUBMIT = ModelReply(tool_calls=[ToolCall(name="submit")])


def make_env(max_turns: int) -> gym.Env:
    """`polar/Code-v0` on the bundled suite; if that suite is mid-edit, on a copy of its complete tasks."""
    polar.envs.registration.register_envs()
    kwargs = {"harness": "builtin", "sandbox": "local", "max_turns": max_turns}
    try:
        return gym.make("polar/Code-v0", **kwargs)
    except TaskFormatError:
        with tempfile.TemporaryDirectory() as suite:
            for task_dir in sorted(BUNDLED.iterdir()):
                if all((task_dir / part).exists() for part in ("task.toml", "stub", "solution", "tests")):
                    try:
                        load_task(task_dir)
                    except TaskFormatError:
                        continue
                    shutil.copytree(task_dir, Path(suite) / task_dir.name)
            return gym.make("polar/Code-v0", suite=suite, **kwargs)  # tasks are read into memory here


def timed(fn, *args, **kwargs):
    """(nanoseconds, result) of one call."""
    start = time.perf_counter_ns()
    result = fn(*args, **kwargs)
    return time.perf_counter_ns() - start, result


def main() -> None:
    args = options(__doc__.splitlines()[0])
    episodes, steps = (8, 10) if args.quick else (100, 20)
    env = make_env(max_turns=steps + 1)
    task_id = env.unwrapped.task_ids[0]
    backend = make_backend("local")
    raw = runtime.run(backend.start(SandboxSpec()))
    mini = LocalEnvironment()
    samples: dict[str, list[int]] = {}

    def episode() -> None:
        ns, _ = timed(env.reset, options={"task_id": task_id})
        samples.setdefault("reset", []).append(ns)
        samples.setdefault("step (bash `true`)", []).extend(time_calls(lambda: env.step(BASH_TRUE), steps))
        ns, (_, _, terminated, _, info) = timed(env.step, SUBMIT)
        assert terminated and info["status"] == "completed", info.get("status")
        samples.setdefault("grading step (submit)", []).append(ns)

    def sandbox_start() -> None:
        ns, sandbox = timed(runtime.run, backend.start(SandboxSpec()))
        runtime.run(sandbox.stop())
        samples.setdefault("sandbox start", []).append(ns)

    peers = {
        "raw sandbox exec `true`": lambda: time_calls(lambda: runtime.run(raw.exec("true")), steps),
        "raw sandbox exec `true`, awaited in the loop":
            lambda: runtime.run(atime_calls(lambda: raw.exec("true"), steps)),
        "mini-swe-agent execute `true`": lambda: time_calls(lambda: mini.execute({"command": "true"}), steps),
    }
    try:
        for r in range(episodes):
            for name in rotated(["episode", "sandbox start", *peers], r):
                if name == "episode":
                    episode()
                elif name == "sandbox start":
                    sandbox_start()
                else:
                    samples.setdefault(name, []).extend(peers[name]())
    finally:
        env.close()
        runtime.run(raw.stop())

    stats = {name: summary(s, "ms" if name in ("reset", "grading step (submit)", "sandbox start") else "us")
             for name, s in samples.items()}
    step, exec_us = stats["step (bash `true`)"]["median_us"], stats["raw sandbox exec `true`"]["median_us"]
    ratios = {
        "step_over_raw_exec": round(step / exec_us, 2),
        "mini_execute_over_step": round(stats["mini-swe-agent execute `true`"]["median_us"] / step, 1),
        "reset_over_sandbox_start":
            round(stats["reset"]["median_ms"] / stats["sandbox start"]["median_ms"], 2),
    }
    notes = {"step (bash `true`)": f"{ratios['step_over_raw_exec']}× raw exec",
             "mini-swe-agent execute `true`": f"{ratios['mini_execute_over_step']}× a step",
             "reset": f"{ratios['reset_over_sandbox_start']}× sandbox start"}
    rows = []
    for name, s in stats.items():
        unit = "ms" if "median_ms" in s else "us"
        label = {"ms": "ms", "us": "µs"}[unit]
        rows.append([name, s[f"median_{unit}"], s[f"p90_{unit}"], label, s["n"], notes.get(name, "")])
    print(table(["measurement", "median", "p90", "unit", "n", "ratio"], rows))
    path = write("env_overhead", args.out, {"quick": args.quick, "episodes": episodes,
                                            "steps_per_episode": steps, "task_id": task_id,
                                            "measurements": stats, "ratios": ratios})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
