"""Ray: what a remote env adds to a step, how fast the driver hands out episodes, how many live episodes one node
worker holds, and oracle episodes per minute on one and two worker nodes.

Every figure comes from a real cluster on this machine. The script runs itself again inside a network namespace of
its own with only loopback (`unshare --net`, then `ip link set lo up`), starts a head with no CPU to give (so no node
worker runs there) and worker nodes with `ray start --block --num-cpus 1`, and stops each by its pid.

- **step**: a `bash true` step of `polar/Code-v0` (built-in harness, bubblewrap) through a `RemoteEnv` on a worker
  node against the same step of the env in this process, in alternating rounds; the ratio of the medians.
- **dispatch**: no-op episodes (an env whose reset and step end at once, with a minimal trace) through
  `run_eval_on_ray` on two worker nodes: handed out, played, sent back, recorded by the driver's `EvalRun`.
- **live**: `RemoteEnvPool` episodes reset on one node worker and left waiting on their first model call (a started
  sandbox, the built-in harness), added in batches until the target, a failed reset (what ran out) or less than
  2 GiB of memory left.
- **oracle**: `polar eval polar/Code-v0 --policy oracle` episodes per minute with one and with two worker nodes.
  On a 2-core machine every node shares the same two cores, so this is CPU-bound: a second node adds no cores.
- **driver**: how the driver's cost grows with nodes and episodes, by simulation (one machine cannot hold 8 nodes):
  N node workers (1, 2, 4, 8) on the one worker node stand for N nodes, each fed no-op episodes (1,000 and
  5,000); the hand-out-and-collect rate and the driver's CPU per episode. Every simulated node shares the
  machine's cores with the driver, so the rate is a floor; the CPU per episode is the driver's own.

    python benchmarks/ray_scale.py [--quick]
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if os.environ.get("POLAR_RAY_BENCH_NETNS") != "1":  # a loopback-only namespace of its own: Ray sees only 127.0.0.1
    os.environ["POLAR_RAY_BENCH_NETNS"] = "1"
    os.execvp("unshare", ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", sys.executable,
                          *sys.argv])

import gymnasium as gym  # noqa: E402
import ray  # noqa: E402
from timing import options, rotated, summary, table, time_calls, write  # noqa: E402

from polar.envs.registration import register_envs  # noqa: E402
from polar.evaluation.evaluate import EvalRun, EvalSettings  # noqa: E402
from polar.evaluation.ray_worker import RemoteEnvPool, run_eval_on_ray, start_workers, stop_workers  # noqa: E402
from polar.policies import make_policy  # noqa: E402
from polar.trace import Named, Trace  # noqa: E402
from polar.types import ModelReply, ModelRequest, ToolCall  # noqa: E402

HEAD = "127.0.0.1:6379"
BASH_TRUE = ModelReply(tool_calls=[ToolCall(name="bash", arguments='{"command": "true"}')])
SUBMIT = ModelReply(tool_calls=[ToolCall(name="submit")])
CODE_TASKS = ("run_length_encoding", "roman_numerals", "caesar_cipher", "balanced_brackets", "word_frequency")
MIN_FREE_GIB = 2.0


class Nodes:
    """`ray start --block` nodes in this namespace, stopped by their pids."""

    def __init__(self, root: Path) -> None:
        self.root, self.procs = root, []

    def start(self, name: str, *args: str, cpus: int = 1) -> None:
        log = self.root / f"{name}.log"
        with log.open("w") as out:
            proc = subprocess.Popen(["ray", "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus",
                                     str(cpus), "--disable-usage-stats", *args], stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        while "block forever" not in log.read_text():
            if proc.poll() is not None:
                raise SystemExit(f"ray node {name} did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)


class NoOpEnv(gym.Env):
    """An episode that ends at its first step: what the driver's dispatch costs without any env work."""

    harness = None

    async def areset(self, *, seed=None, options=None):
        return ModelRequest(messages=[]), {"task": None, "task_id": options["task_id"]}

    async def astep(self, action):
        now = "2026-01-01T00:00:00.000+00:00"
        trace = Trace(episode_id=f"noop-{time.monotonic_ns()}", env_id="noop", env_version=1, task_id="noop",
                      harness=Named(name="none"), sandbox="none", started_at=now, ended_at=now, status="completed",
                      turns=[], reward=0.0, reward_components={}, polar_version="0")
        return ModelRequest(messages=[]), 0.0, True, False, {"trace": trace}


def code_env(**kwargs) -> functools.partial:
    return functools.partial(gym.make, "polar/Code-v0", harness="builtin", sandbox="local", **kwargs)


def free_gib() -> float:
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return int(meminfo["MemAvailable"].split()[0]) / 2**20


def usage(root: int) -> dict:
    """The processes under `root` (a node: its raylet, workers and their sandboxes): count, resident MiB, open fds."""
    table = [line.split() for line in subprocess.run(["ps", "-eo", "pid=,ppid=,rss="], capture_output=True,
                                                     text=True, check=True).stdout.splitlines()]
    children: dict[int, list[tuple[int, int]]] = {}
    for pid, ppid, rss in table:
        children.setdefault(int(ppid), []).append((int(pid), int(rss)))
    todo, procs, rss_kib, fds = [root], 0, 0, 0
    while todo:
        for pid, rss in children.get(todo.pop(), []):
            todo.append(pid)
            procs, rss_kib = procs + 1, rss_kib + rss
            try:
                fds += len(os.listdir(f"/proc/{pid}/fd"))
            except OSError:  # it ended meanwhile
                pass
    return {"processes": procs, "rss_mib": round(rss_kib / 1024, 1), "fds": fds}


def eval_run(out: Path, tasks: tuple[str, ...], k: int, env_id: str = "polar/Code-v0") -> EvalRun:
    settings = EvalSettings(env_id=env_id, harness="builtin", sandbox="local", policy="bench", model=None,
                            suite=None, suite_hash="bench", tasks=tasks, k=k, seed=0, max_turns=30, time_limit_s=None)
    return EvalRun.open(out, settings)


def step_overhead(pool: RemoteEnvPool, rounds: int, steps: int) -> dict:
    """The median `bash true` step in process and through a remote env, and their ratio."""
    local, remote = code_env(max_turns=steps + 1)().unwrapped, pool.make(code_env(max_turns=steps + 1))
    samples: dict[str, list[int]] = {}
    try:
        for r in range(rounds):
            for name in rotated(["in process", "remote"], r):
                env = local if name == "in process" else remote
                env.reset(options={"task_id": CODE_TASKS[0]})
                samples.setdefault(name, []).extend(time_calls(lambda env=env: env.step(BASH_TRUE), steps))
                assert env.step(SUBMIT)[4]["status"] == "completed"
    finally:
        local.close()
        remote.close()
    stats = {name: summary(s) for name, s in samples.items()}
    return {"steps": stats, "remote_over_in_process": round(stats["remote"]["median_us"]
                                                             / stats["in process"]["median_us"], 2)}


def timed_run(run, make_env, policy, jobs: int) -> tuple[list, float]:
    """The run's episodes on one node worker per worker node, the workers stopped after: (workers, seconds)."""
    workers = start_workers(make_env, policy, jobs)
    try:
        start = time.perf_counter()
        asyncio.run(run_eval_on_ray(run, workers, jobs))
        return workers, time.perf_counter() - start
    finally:
        stop_workers(workers)


def dispatch(out: Path, episodes: int, jobs: int) -> dict:
    """No-op episodes through the driver's queue on every worker node: episodes per second, end to end."""
    run = eval_run(out, tuple(f"noop{i}" for i in range(episodes // 10)), 10, env_id="noop")
    workers, elapsed = timed_run(run, NoOpEnv, make_policy("empty"), jobs)
    assert len(run.done) == episodes
    return {"episodes": episodes, "jobs_per_node": jobs, "nodes": len(workers), "seconds": round(elapsed, 2),
            "episodes_per_s": round(episodes / elapsed, 1)}


def driver_cost(out: Path, simulated: tuple[int, ...], episodes: tuple[int, ...], jobs: int) -> list[dict]:
    """A simulation on one machine: N node workers on the one worker node stand for N nodes, and no-op episodes go
    through the driver's queue to them; the hand-out-and-collect rate and the driver process's CPU (its Ray threads
    included) per episode, for each N and episode count."""
    from polar.evaluation.ray_worker import check_workers, place, worker_nodes

    node = worker_nodes()[0]  # every simulated node worker lives on this one
    rows = []
    for n in simulated:
        workers = [place(node, jobs + 2, num_cpus=0).remote(NoOpEnv, make_policy("empty")) for _ in range(n)]
        check_workers([node] * n, workers)
        try:
            for count in episodes:
                run = eval_run(out / f"{n}-{count}", tuple(f"noop{i}" for i in range(count // 10)), 10,
                               env_id="noop")
                cpu, start = time.process_time(), time.perf_counter()
                asyncio.run(run_eval_on_ray(run, workers, jobs))
                elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
                assert len(run.done) == count
                rows.append({"simulated_nodes": n, "episodes": count, "jobs_per_node": jobs,
                             "seconds": round(elapsed, 2), "episodes_per_s": round(count / elapsed, 1),
                             "driver_cpu_ms_per_episode": round(cpu * 1000 / count, 3)})
                print(rows[-1], flush=True)
        finally:
            stop_workers(workers)
    return rows


def live_episodes(pool: RemoteEnvPool, node: int, target: int, batch: int) -> dict:
    """Episodes reset on one node (`node`: its `ray start` pid) and left waiting on their first model call, until
    `target` or what runs out; the node's processes, memory and fds as they grow."""
    make, envs, growth, stopped = code_env(max_turns=2, time_limit_s=3600), [], [], "reached the target"
    before, start = usage(node), time.perf_counter()

    async def reset(env, task_id: str) -> None:
        obs, _ = await env.areset(options={"task_id": task_id})
        if not obs.messages:
            raise RuntimeError("the episode ended before its first model call")

    async def reset_all(new: list) -> None:
        tasks = (reset(env, CODE_TASKS[i % len(CODE_TASKS)]) for i, env in enumerate(new))
        await asyncio.wait_for(asyncio.gather(*tasks), 600)

    try:
        while len(envs) < target:
            if free_gib() < MIN_FREE_GIB:
                stopped = f"stopped early: less than {MIN_FREE_GIB} GiB of memory left"
                break
            new = [pool.make(make) for _ in range(min(batch, target - len(envs)))]
            envs += new
            try:
                asyncio.run(reset_all(new))
            except Exception as e:  # what ran out first, in its own words
                stopped = f"a reset failed at {len(envs)}: {type(e).__name__}: {str(e).splitlines()[0][:300]}"
                break
            growth.append({"live": len(envs), **usage(node), "free_gib": round(free_gib(), 2),
                           "seconds": round(time.perf_counter() - start, 1)})
            print(growth[-1], flush=True)
    finally:
        for env in envs:
            env.close()
    last = growth[-1] if growth else {"live": 0}
    each = {f"{key}_per_episode": round((last[key] - before[key]) / last["live"], 2)
            for key in ("processes", "rss_mib", "fds")} if last["live"] else {}
    return {"target": target, "live": last["live"], "stopped": stopped, "node_before": before, **each,
            "limits": {"fds (ulimit -n)": os.sysconf("SC_OPEN_MAX"), "pid_max": int(Path("/proc/sys/kernel/pid_max")
                                                                                    .read_text())},
            "growth": growth}


def oracle_rate(out: Path, k: int, jobs: int) -> dict:
    """Oracle episodes per minute through `run_eval_on_ray` on every worker node now in the cluster."""
    run = eval_run(out, CODE_TASKS, k)
    workers, elapsed = timed_run(run, code_env(pool=1), make_policy("oracle"), jobs)
    solved = sum(t.reward == 1.0 for t in run.done.values())
    return {"nodes": len(workers), "episodes": len(run.done), "solved": solved, "jobs_per_node": jobs,
            "seconds": round(elapsed, 1), "episodes_per_min": round(len(run.done) * 60 / elapsed, 1)}


def main() -> None:
    args = options(__doc__.splitlines()[0])
    rounds, steps, noops, live, k = (3, 10, 200, 20, 1) if args.quick else (20, 20, 1000, 1000, 4)
    simulated = (1, 2) if args.quick else (1, 2, 4, 8)
    register_envs()
    root = Path(tempfile.mkdtemp(prefix="polar-rb-", dir="/tmp"))  # short: Ray's socket paths live under it
    nodes = Nodes(root)
    figures: dict = {"quick": args.quick}
    try:
        nodes.start("head", "--head", "--port", HEAD.split(":")[1], "--include-dashboard", "false",
                    "--temp-dir", str(root / "ray"), cpus=0)
        nodes.start("node1", "--address", HEAD)
        ray.init(address=HEAD, log_to_driver=False, logging_level="ERROR")
        pool = RemoteEnvPool()
        figures["step"] = step_overhead(pool, rounds, steps)
        figures["live"] = live_episodes(pool, nodes.procs[1].pid, live, 20 if args.quick else 50)
        for worker in pool.workers:
            ray.kill(worker)  # the pool's host takes the node's CPU; the eval's workers need it
        figures["oracle"] = [oracle_rate(root / "oracle1", k, 2)]
        nodes.start("node2", "--address", HEAD)
        figures["oracle"].append(oracle_rate(root / "oracle2", k, 2))
        figures["dispatch"] = dispatch(root / "noop", noops, 32)
        figures["driver"] = driver_cost(root / "driver", simulated, (noops, 5 * noops), 32)
    finally:
        ray.shutdown()
        nodes.stop()
    step, live_fig, disp = figures["step"], figures["live"], figures["dispatch"]
    rows = [["step in process (bash `true`)", step["steps"]["in process"]["median_us"], "µs", ""],
            ["step through a remote env", step["steps"]["remote"]["median_us"], "µs",
             f"{step['remote_over_in_process']}× in process"],
            ["no-op episodes handed out and collected", disp["episodes_per_s"], "episodes/s",
             f"{disp['episodes']} on {disp['nodes']} nodes, {disp['jobs_per_node']} at once each"],
            ["live episodes on one node worker", live_fig["live"], "episodes",
             f"{live_fig['stopped']}; each: {live_fig.get('rss_mib_per_episode')} MiB, "
             f"{live_fig.get('processes_per_episode')} processes, {live_fig.get('fds_per_episode')} fds"]]
    rows += [[f"oracle episodes, {o['nodes']} worker node(s)", o["episodes_per_min"], "episodes/min",
              f"{o['solved']}/{o['episodes']} solved (CPU-bound: 2 cores shared)"] for o in figures["oracle"]]
    rows += [[f"driver, {d['simulated_nodes']} simulated node(s), {d['episodes']} no-op episodes",
              d["episodes_per_s"], "episodes/s", f"driver CPU {d['driver_cpu_ms_per_episode']} ms/episode "
              "(simulation: every node worker on one machine)"] for d in figures["driver"]]
    print(table(["measurement", "value", "unit", "note"], rows))
    path = write("ray_scale", args.out, figures)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
