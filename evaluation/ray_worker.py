"""Episodes on a Ray cluster, one node worker (a Ray actor) per node: `polar eval --ray`, and remote envs for trainers.

A `NodeWorker` owns its node's envs (each with its sandbox pool and harness install) and plays many episodes at once
with the same asyncio code as a local run (`play_episode`); the driver hands out (task, sample) pairs and records each
trace as it comes back, through the same `EvalRun` as a local run, so the outputs, the summary and the resume after a
kill are the local ones. A node that lacks what the work needs refuses at start, naming itself, what is missing and the
fix. A node that dies mid-run loses only its episodes in flight, which go back to the queue for the other nodes.

For trainers the same worker hosts envs instead: a `RemoteEnv` is a Gymnasium handle (`reset`, `step`, `areset`,
`astep`, the same observations, actions and info as the env itself) to an env living on a node worker, and a
`RemoteEnvPool` spreads such envs over every node, so the policy (the trainer's model) runs on the driver's side while
sandboxes and harnesses run on the nodes. One module for both: they are one actor, placed one way.

It lives in `evaluation/` beside `evaluate.py` because it is the eval's other way to run episodes: the driver side
reuses `EvalRun`, and the worker is `play_episode` behind an actor.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import gymnasium as gym
import ray
from ray.exceptions import RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from polar import __version__
from polar.envs.polar_env import PolicyFailure, _now
from polar.envs.spaces import ModelReplySpace, ModelRequestSpace
from polar.envs.wrapper import async_env
from polar.errors import PolarError
from polar.evaluation.evaluate import EvalRun, episode_seed
from polar.evaluation.runner import play_episode
from polar.protocols import Policy
from polar.trace import Named, Trace, Turn
from polar.types import ModelReply, ModelRequest

START_CLUSTER = ("start one with `ray start --head` (and `ray start --address HEAD:6379` on each other node), "
                 "then pass its address: --ray HEAD:6379")


class NodeWorker:
    """The episodes of one node. For an eval: up to `jobs` envs made with the driver's `make_env`, each reused
    episode after episode, answered by the driver's policy (which runs here, beside the sandbox). For a trainer
    (no `make_env`): envs hosted by key (`open`, `reset`, `step`, `close_env`), answered by the driver."""

    def __init__(self, make_env: Callable[[], gym.Env] | None = None, policy: Policy | None = None) -> None:
        from polar.envs.registration import register_envs

        register_envs()
        self.make_env, self.policy = make_env, policy
        self.node = ray.get_runtime_context().get_node_id()
        self.idle: list[gym.Env] = []
        self.playing: set[asyncio.Task] = set()
        self.hosted: dict[int, Any] = {}
        self.keys = itertools.count()

    async def _make(self, make_env: Callable[[], gym.Env]) -> gym.Env:
        """A new env, made on a worker thread (its suite's files are parsed under `polar.python_ast`'s lock)."""
        return await asyncio.to_thread(make_env)

    async def problems(self, driver_version: str) -> list[str]:
        """What this node lacks for the work, each with its fix; empty when it can take episodes. Making the first
        env checks the sandbox backend (bubblewrap, a Docker engine) and the task suite, as a local run would."""
        found = []
        if __version__ != driver_version:
            found.append(f"polar-gym {__version__}, not the driver's {driver_version}: install the driver's version "
                         "here (pip install polar-gym=={driver_version}, or the same checkout)")
        if self.make_env is None:  # a trainer's host: each env it opens checks its own backend
            return found
        try:
            env = await self._make(self.make_env)
        except PolarError as e:
            return [*found, str(e)]
        self.idle.append(env)
        harness = env.unwrapped.harness
        if getattr(harness, "install_dir", None) is not None:
            from polar.harnesses.external import is_installed

            if shutil.which("node") is None:
                found.append(f"no Node.js for the {harness.name} harness: install Node.js 20+ and npm")
            elif not is_installed(harness):
                found.append(f"the {harness.name} harness is not installed: polar harnesses --install {harness.name}")
        return found

    async def play(self, task_id: str, seed: int) -> str:
        """One episode on an idle env (a new one when every env is busy); its trace as JSON, with this node's id."""
        assert self.make_env is not None and self.policy is not None, "a trainer's host plays no eval episodes"
        env = self.idle.pop() if self.idle else await self._make(self.make_env)
        me = asyncio.current_task()
        assert me is not None
        self.playing.add(me)
        try:
            trace = await play_episode(env, self.policy, seed=seed, task_id=task_id)
        except BaseException:
            await asyncio.to_thread(env.close)
            raise
        finally:
            self.playing.discard(me)
        self.idle.append(env)
        return trace.model_copy(update={"node": self.node}).to_json()

    async def open(self, make_env: Callable[[], gym.Env]) -> tuple[int, int | None, dict[str, Any]]:
        """Make an env here for the driver to step: its key for `reset`, `step` and `close_env`, its `max_tokens`,
        and the trace fields the driver needs to end an episode itself if this node is lost mid-episode."""
        env = await self._make(make_env)
        key = next(self.keys)
        self.hosted[key] = env
        base = env.unwrapped
        about = {"env_id": base.family.env_id, "env_version": base.family.version, "suite": str(base.suite),
                 "harness": Named(name=base.harness.name, version=base.harness.version), "sandbox": base.sandbox_name,
                 "reward_components": base.family.reward.zeros()}
        return key, env.get_wrapper_attr("max_tokens"), about

    async def reset(self, key: int, seed: int | None, options: dict[str, Any] | None) -> tuple[ModelRequest, dict]:
        return await async_env(self.hosted[key]).areset(seed=seed, options=options)

    async def step(self, key: int, action: Any, max_tokens: int | None) -> tuple:
        env = self.hosted[key]
        env.set_wrapper_attr("max_tokens", max_tokens)
        return await async_env(env).astep(action)

    async def close_env(self, key: int) -> None:
        if (env := self.hosted.pop(key, None)) is not None:
            await asyncio.to_thread(env.close)

    async def close(self) -> None:
        """Stop every env (and so every sandbox) this worker holds: the idle ones, the ones mid-episode (their
        episodes cancelled first; a driver that stops, Ctrl-C included, leaves nothing behind) and the hosted ones."""
        playing = list(self.playing)
        for task in playing:
            task.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        while self.idle:
            await asyncio.to_thread(self.idle.pop().close)
        while self.hosted:
            await self.close_env(next(iter(self.hosted)))


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


def worker_nodes() -> list[dict]:
    """The live nodes with a CPU to give a node worker (a head started with `--num-cpus 0` runs none)."""
    nodes = [n for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU", 0) >= 1]
    if not nodes:
        raise PolarError("the Ray cluster has no live node with a CPU for a node worker: start one with "
                         "`ray start --address HEAD:6379 --num-cpus 2`")
    return nodes


def place(node: dict, concurrency: int, **options: Any) -> Any:
    """The options of a node worker pinned to `node` by node affinity (the one placement of both uses); `options`
    add to Ray's or override them (a benchmark's simulated nodes take no CPU: `num_cpus=0`)."""
    return ray.remote(NodeWorker).options(**{
        "num_cpus": 1, "max_concurrency": concurrency, "max_restarts": 0,
        "scheduling_strategy": NodeAffinitySchedulingStrategy(node["NodeID"], soft=False), **options})


def check_workers(nodes: list[dict], workers: list[Any]) -> None:
    """Each worker's `problems`, asked before any episode starts; any refusal stops the workers and the run."""
    refusals = []
    for node, found in zip(nodes, ray.get([w.problems.remote(__version__) for w in workers]), strict=True):
        refusals += [f"node {node['NodeManagerAddress']} ({node['NodeID']}): {problem}" for problem in found]
    if refusals:
        stop_workers(workers)
        raise PolarError("a node cannot run these episodes:\n  " + "\n  ".join(refusals))


def start_workers(make_env: Callable[[], gym.Env], policy: Policy, jobs: int) -> list[Any]:
    """One `NodeWorker` on every live node with a CPU to give, pinned there by node affinity; each is checked
    before any episode starts, and any refusal stops the run."""
    nodes = worker_nodes()
    workers = [place(n, jobs + 2).remote(make_env, policy) for n in nodes]
    check_workers(nodes, workers)
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


class RemoteEnv(gym.Env[ModelRequest, ModelReply]):
    """A Gymnasium handle to an env living on a node worker: `reset`, `step`, `areset`, `astep` and `close` are the
    env's own, run there, so the observations, actions and info are the env's (the last step's `info["trace"]`
    included, with `node`: the Ray node the env lives on). `max_tokens`, which trainers lower mid-episode to
    truncate, goes with the next step.

    A node lost mid-episode (its worker gone) does not raise out of the trainer's loop: the episode ends as a
    sandbox that broke does, with status `sandbox_error` naming the node, at once if it was lost in a step, at the
    next step if in `reset` (which returns an empty request, as an episode that could not start does). The driver
    keeps the episode's turns for that trace, so its sampled tokens still reach the trainer."""

    def __init__(self, worker: Any, key: int, node: str, about: dict[str, Any], max_tokens: int | None = None,
                 on_close: Callable[[], None] | None = None, on_lost: Callable[[], None] | None = None) -> None:
        self.worker, self.key, self.node, self.about = worker, key, node, about
        self.on_close, self.on_lost = on_close, on_lost
        self.max_tokens = max_tokens
        self.observation_space = ModelRequestSpace()
        self.action_space = ModelReplySpace()
        self.lost: str | None = None
        self.episode: dict[str, Any] = {}
        self.turns: list[Turn] = []
        self.pending: ModelRequest | None = None
        self.observed_at = 0.0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        options = self._begin(seed, options)
        try:
            done = ray.get(self.worker.reset.remote(self.key, seed, options))
        except RayActorError as e:
            self._lose(e)
            done = None
        return self._reset(done, options)

    def step(self, action: Any):
        started = time.monotonic()
        try:
            done = None if self.lost else ray.get(self.worker.step.remote(self.key, action, self.max_tokens))
        except RayActorError as e:
            self._lose(e)
            done = None
        return self._stepped(action, started, done)

    async def areset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        options = self._begin(seed, options)
        try:
            done = await self.worker.reset.remote(self.key, seed, options)
        except RayActorError as e:
            self._lose(e)
            done = None
        return self._reset(done, options)

    async def astep(self, action: Any):
        started = time.monotonic()
        try:
            done = None if self.lost else await self.worker.step.remote(self.key, action, self.max_tokens)
        except RayActorError as e:
            self._lose(e)
            done = None
        return self._stepped(action, started, done)

    def _begin(self, seed: int | None, options: dict[str, Any] | None) -> dict[str, Any]:
        options = options or {}
        policy = options.get("policy")
        self.episode = {"seed": seed, "started_at": _now(), "task_id": options.get("task_id"),
                        "policy": Named.model_validate(policy) if policy is not None else None}
        self.turns = []
        return options

    def _reset(self, done: tuple | None, options: dict[str, Any]) -> tuple:
        obs, info = done or (ModelRequest(messages=[]), {"task_id": options.get("task_id"), "status": "sandbox_error"})
        if done is not None:
            self.episode |= {"task_id": info["task_id"], "episode_id": info["episode_id"]}
        self.pending, self.observed_at = obs, time.monotonic()
        return obs, info

    def _stepped(self, action: Any, started: float, done: tuple | None) -> tuple:
        self._record(action, started)
        if done is not None:
            obs, reward, terminated, truncated, info = done
            if "trace" in info:  # the episode's end: its trace names the node it ran on
                info["trace"] = info["trace"].model_copy(update={"node": self.node})
            self.pending, self.observed_at = obs, time.monotonic()
            return obs, reward, terminated, truncated, info
        trace = self._lost_trace()
        info = {"task_id": trace.task_id, "episode_id": trace.episode_id, "turn": len(self.turns),
                "status": trace.status, "reward_components": dict(trace.reward_components), "trace": trace}
        return ModelRequest(messages=[]), trace.reward, True, False, info

    def _record(self, action: Any, started: float) -> None:
        """The turn as the driver saw it (what a lost node's trace holds); a policy's failure is no turn."""
        if self.pending is not None and not isinstance(action, PolicyFailure):
            self.turns.append(Turn(index=len(self.turns), request=self.pending, reply=ModelReply.coerce(action),
                                   policy_latency_s=started - self.observed_at,
                                   env_latency_s=time.monotonic() - started))
        self.pending = None

    def _lose(self, error: RayActorError) -> None:
        """Record that the env's node is gone (the pool stops placing envs there); nothing comes back from it."""
        self.lost = (f"the Ray node {self.node} running this episode's env is gone mid-episode "
                     f"({str(error).splitlines()[0]}); its sandbox went with it")
        if self.on_lost is not None:
            self.on_lost()

    def _lost_trace(self) -> Trace:
        episode = self.episode
        return Trace(**self.about, episode_id=episode.get("episode_id") or str(uuid.uuid4()),
                     task_id=episode.get("task_id") or "unknown", policy=episode.get("policy"),
                     seed=episode.get("seed"), started_at=episode.get("started_at") or _now(), ended_at=_now(),
                     status="sandbox_error", error=self.lost, turns=self.turns, reward=0.0,
                     polar_version=__version__, node=self.node)

    def close(self) -> None:
        try:
            if self.lost is None:
                ray.get(self.worker.close_env.remote(self.key))
        except RayActorError:  # its node is gone, and its sandbox with it
            pass
        finally:
            if self.on_close is not None:
                self.on_close()
                self.on_close = None


HOST = "polar-envs-{node}"
"""The name of a node's env host: every trainer process on a cluster (each of verl's agent-loop workers) shares it."""


class RemoteEnvPool:
    """Envs on every worker node of a Ray cluster, each opened on the node with the fewest this pool holds open;
    `play` runs many episodes on them with a policy on this side. One pool a process (`shared`) so that a trainer's
    loops share the node workers."""

    _shared: dict[str, RemoteEnvPool] = {}

    def __init__(self, address: str | None = None) -> None:
        """`address`: the cluster to join (HEAD:6379; None or `auto`: the one this process is already in, else
        the one `ray start` left on this machine)."""
        if not ray.is_initialized():
            connect(address)
        self.nodes = worker_nodes()
        self.workers = [place(n, 10_000, name=HOST.format(node=n["NodeID"]), get_if_exists=True).remote()
                        for n in self.nodes]
        check_workers(self.nodes, self.workers)
        self.open = [0] * len(self.workers)
        self.lost: set[int] = set()
        """The workers whose node is gone."""
        self.lock = threading.Lock()

    @classmethod
    def shared(cls, address: str | bool | None = None) -> RemoteEnvPool:
        """This process's pool (made on first use); `address` True means the cluster this process is in."""
        key = "auto" if address is True or not address else str(address)
        if key not in cls._shared:
            cls._shared[key] = cls(None if key == "auto" else key)
        return cls._shared[key]

    def make(self, make_env: Callable[[], gym.Env]) -> RemoteEnv:
        """A new env, `make_env()` run on the least-loaded live node (`make_env` travels: a `functools.partial`). A
        node found gone (here, or by one of its envs mid-episode) takes no more envs."""
        while True:
            with self.lock:  # `play` makes envs from many threads at once
                live = [i for i in range(len(self.workers)) if i not in self.lost]
                if not live:
                    raise PolarError("every worker node of the Ray cluster is gone: restart them "
                                     "(`ray start --address HEAD:6379` on each), then the trainer")
                i = min(live, key=self.open.__getitem__)
                self.open[i] += 1
            try:
                key, max_tokens, about = ray.get(self.workers[i].open.remote(make_env))
            except RayActorError:
                self._closed(i)
                self._lose(i)
                continue
            except BaseException:
                self._closed(i)
                raise
            return RemoteEnv(self.workers[i], key, self.nodes[i]["NodeID"], about, max_tokens,
                             functools.partial(self._closed, i), functools.partial(self._lose, i))

    def _closed(self, i: int) -> None:
        with self.lock:
            self.open[i] -= 1

    def _lose(self, i: int) -> None:
        with self.lock:
            self.lost.add(i)

    async def play(self, make_env: Callable[[], gym.Env], policy: Policy,
                   episodes: Iterable[tuple[str | None, int]]) -> list[Trace]:
        """Each (task id, seed) episode on its own remote env, all at once, `policy` answering here; the traces in
        order, each with the node it ran on."""
        async def one(task_id: str | None, seed: int) -> Trace:
            env = await asyncio.to_thread(self.make, make_env)
            try:
                trace = await play_episode(env, policy, seed=seed, task_id=task_id)
            finally:
                await asyncio.to_thread(env.close)
            return trace

        return list(await asyncio.gather(*(one(task_id, seed) for task_id, seed in episodes)))
