"""`polar eval --ray`: the episodes of an eval on a Ray cluster, one node worker (a Ray actor) per node.

A `NodeWorker` owns its node's envs (each with its sandbox pool and harness install) and plays many episodes at once
with the same asyncio code as a local run (`play_episode`); the driver hands out (task, sample) pairs and records each
trace as it comes back, through the same `EvalRun` as a local run, so the outputs, the summary and the resume after a
kill are the local ones. A node that lacks what the work needs refuses at start, naming itself, what is missing and the
fix. A node that dies mid-run loses only its episodes in flight, which go back to the queue for the other nodes.

It lives in `evaluation/` beside `evaluate.py` because it is the eval's other way to run episodes: the driver side
reuses `EvalRun`, and the worker is `play_episode` behind an actor.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import ray
from ray.exceptions import RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from polar import __version__
from polar.errors import PolarError
from polar.evaluation.evaluate import EvalRun, episode_seed
from polar.evaluation.runner import play_episode
from polar.protocols import Policy
from polar.trace import Trace

START_CLUSTER = ("start one with `ray start --head` (and `ray start --address HEAD:6379` on each other node), "
                 "then pass its address: --ray HEAD:6379")


class NodeWorker:
    """The episodes of one node: up to `jobs` envs made with the driver's `make_env`, each reused episode after
    episode, answered by the driver's policy (which runs here, beside the sandbox)."""

    def __init__(self, make_env: Callable[[], gym.Env], policy: Policy) -> None:
        from polar.envs.registration import register_envs

        register_envs()
        self.make_env, self.policy = make_env, policy
        self.node = ray.get_runtime_context().get_node_id()
        self.idle: list[gym.Env] = []

    async def problems(self, driver_version: str) -> list[str]:
        """What this node lacks for the work, each with its fix; empty when it can take episodes. Making the first
        env checks the sandbox backend (bubblewrap, a Docker engine) and the task suite, as a local run would."""
        found = []
        if __version__ != driver_version:
            found.append(f"polar-gym {__version__}, not the driver's {driver_version}: install the driver's version "
                         "here (pip install polar-gym=={driver_version}, or the same checkout)")
        try:
            env = await asyncio.to_thread(self.make_env)
        except PolarError as e:
            return [*found, str(e)]
        self.idle.append(env)
        harness = env.unwrapped.harness
        if getattr(harness, "install_dir", None) is not None:
            from polar.doctor import is_installed

            if shutil.which("node") is None:
                found.append(f"no Node.js for the {harness.name} harness: install Node.js 20+ and npm")
            elif not is_installed(harness):
                found.append(f"the {harness.name} harness is not installed: polar harnesses --install {harness.name}")
        return found

    async def play(self, task_id: str, seed: int) -> str:
        """One episode on an idle env (a new one when every env is busy); its trace as JSON, with this node's id."""
        env = self.idle.pop() if self.idle else await asyncio.to_thread(self.make_env)
        try:
            trace = await play_episode(env, self.policy, seed=seed, task_id=task_id)
        except BaseException:
            await asyncio.to_thread(env.close)
            raise
        self.idle.append(env)
        return trace.model_copy(update={"node": self.node}).to_json()

    async def close(self) -> None:
        """Stop every env (and so every sandbox) this worker holds."""
        while self.idle:
            await asyncio.to_thread(self.idle.pop().close)


def connect(address: str | None) -> None:
    """Join the Ray cluster at `address` (None or `auto`: the one `ray start` left on this machine, or RAY_ADDRESS);
    no cluster there is a one-line error naming the address and how to start one."""
    if address and address != "auto" and "://" not in address:
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host or "127.0.0.1", int(port or 6379)), timeout=5).close()
        except (OSError, ValueError):
            raise PolarError(f"no Ray cluster answers at {address}: {START_CLUSTER}") from None
    try:
        ray.init(address=address or "auto", log_to_driver=False, logging_level="ERROR")
    except (ConnectionError, RuntimeError) as e:
        raise PolarError(f"no Ray cluster at {address or 'auto'} ({str(e).splitlines()[0]}): {START_CLUSTER}") from None


def start_workers(make_env: Callable[[], gym.Env], policy: Policy, jobs: int) -> list[Any]:
    """One `NodeWorker` on every live node with a CPU to give (a head started with `--num-cpus 0` runs none), pinned
    there by node affinity; each is checked before any episode starts, and any refusal stops the run."""
    nodes = [n for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU", 0) >= 1]
    if not nodes:
        raise PolarError("the Ray cluster has no live node with a CPU for a node worker: start one with "
                         "`ray start --address HEAD:6379 --num-cpus 2`")
    actor = ray.remote(NodeWorker)
    workers = [actor.options(num_cpus=1, max_concurrency=jobs + 2, max_restarts=0,
                             scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
               .remote(make_env, policy) for n in nodes]
    refusals = []
    for node, found in zip(nodes, ray.get([w.problems.remote(__version__) for w in workers]), strict=True):
        refusals += [f"node {node['NodeManagerAddress']} ({node['NodeID']}): {problem}" for problem in found]
    if refusals:
        stop_workers(workers)
        raise PolarError("a node cannot run these episodes:\n  " + "\n  ".join(refusals))
    return workers


def stop_workers(workers: list[Any]) -> None:
    """Close each live worker's envs, then end it; a worker on a dead node is already gone."""
    for worker in workers:
        try:
            ray.get(worker.close.remote(), timeout=60)
        except RayActorError:
            continue
        ray.kill(worker)


async def run_eval_on_ray(run: EvalRun, workers: list[Any], jobs: int,
                          progress: Callable[[Trace], None] | None = None,
                          on_lost: Callable[[str], None] | None = None) -> None:
    """Every episode still to do, `jobs` at a time on each node worker; each trace recorded on the driver as it
    comes back (`progress(trace)` after). A worker that dies (its node gone) puts its episodes in flight back for the
    others, each told to `on_lost(message)`; only when every worker is gone does the run stop, with what is done kept
    for a resume."""
    queue: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
    for item in run.todo():
        queue.put_nowait(item)
    lost: list[str] = []

    async def feed(worker: Any) -> None:
        while True:
            task_id, sample = await queue.get()
            try:
                line = await worker.play.remote(task_id, episode_seed(run.settings.seed, task_id, sample))
            except RayActorError as e:
                queue.put_nowait((task_id, sample))
                queue.task_done()
                lost.append(str(e).splitlines()[0])
                if on_lost is not None:
                    on_lost(f"a node worker is gone ({lost[-1]}): {task_id}#{sample} goes back to the other nodes")
                return
            trace = Trace.model_validate_json(line)
            run.record(task_id, sample, trace)
            queue.task_done()
            if progress is not None:
                progress(trace)

    feeders = [asyncio.ensure_future(feed(w)) for w in workers for _ in range(max(1, jobs))]
    finished = asyncio.ensure_future(queue.join())
    try:
        while not finished.done():
            await asyncio.wait([finished, *(f for f in feeders if not f.done())], return_when=asyncio.FIRST_COMPLETED)
            for feeder in feeders:
                if feeder.done() and feeder.exception() is not None:
                    raise feeder.exception()
            if all(f.done() for f in feeders) and not finished.done():
                raise PolarError(f"every node worker is gone ({lost[-1] if lost else 'no reason given'}); "
                                 f"{queue.qsize()} episode(s) not run: rerun the same command to resume")
    finally:
        for task in (finished, *feeders):
            task.cancel()
