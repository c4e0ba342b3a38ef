"""`PolarEnv`: a Gymnasium env made of a task, a sandbox, a harness and a verifier.

The observation is the model request the harness is waiting on; the action is the model's reply. `reset`
starts a sandbox, sets up the task and launches the harness until its first model call. `step` answers that
call and runs until the next one or the harness's exit. `terminated` means the harness finished (or the
episode broke: see `info["status"]`); `truncated` means a turn, token or wall-clock limit cut it short. The
verifier grades the sandbox in both cases, once the harness stopped and every process the agent started is dead
(`Sandbox.reset_processes`: grading gets a fresh shell), and the last step's `info["trace"]` holds the whole episode.
A task that cannot start (its sandbox, its setup, its image) is still an episode: `reset` returns an empty request
and the first step ends it with status `sandbox_error` and the reason, so a run of many tasks goes on. A harness
that cannot start raises: it would fail every task alike.
A policy that cannot answer a call steps a `PolicyFailure` instead of a reply: the episode ends `policy_error`.
Each observation carries the episode id (`request.episode_id`), which policies send upstream as a session key.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import gymnasium as gym
import numpy as np

from polar import __version__, runtime
from polar.envs.registration import load_family
from polar.envs.sandbox import make_backend
from polar.envs.sandbox.pool import PooledBackend
from polar.envs.spaces import ModelReplySpace, ModelRequestSpace
from polar.errors import HarnessError, SandboxError, TaskFormatError
from polar.harnesses import make_harness
from polar.protocols import EnvFamily, Grade, Harness, HarnessExit, HarnessRun, Sandbox, ToolSet
from polar.tasks import select_tasks
from polar.trace import Named, Trace, Turn
from polar.types import ModelReply, ModelRequest

DEFAULT_MAX_TURNS = 30
"""Model calls before an episode is truncated, unless the caller says otherwise: room for the longest bundled
reference solution (a Web-v0 task takes up to 17 browser actions) with margin."""
DEFAULT_TIME_LIMIT_S = 900.0
"""An episode's wall-clock budget when neither the caller nor the task sets one."""


@dataclass(frozen=True)
class PolicyFailure:
    """The action for a model call the policy could not answer (a prompt longer than the model's context, a server
    error): the episode ends with status `policy_error` and this message, graded as the sandbox stands. The call is
    not recorded as a turn, since it has no reply; the run goes on with the next episode."""

    error: str



def draw_episode_id(rng: np.random.Generator) -> str:
    """The id a reset draws from its freshly seeded generator, so a seed fixes its episode's id: the leaderboard
    checks that each trace's id is its seed's (`seeded_episode_id`)."""
    return str(uuid.UUID(bytes=rng.bytes(16), version=4))


def seeded_episode_id(seed: int) -> str:
    """The episode id `reset(seed=seed, options={"task_id": ...})` gives, as `polar eval` resets (a reset that picks
    its own task draws the pick first)."""
    return draw_episode_id(gym.utils.seeding.np_random(seed)[0])


@dataclass
class _Episode:
    task: Any
    episode_id: str
    seed: int | None
    policy: Named | None
    started_at: str
    time_limit_s: float
    deadline: float
    sandbox: Sandbox | None = None
    tools: ToolSet | None = None
    """What the env provides the harness for this episode (a browser), when the family sets any up."""
    state: Any = None
    """The family's record of the episode, from `setup`, for `grade`."""
    run: HarnessRun | None = None
    pending: ModelRequest | None = None
    observed_at: float = 0.0
    turns: list[Turn] = field(default_factory=list)
    tokens: int = 0
    done: bool = False
    ended_early: tuple[str, str | None] | None = None
    """(status, error) when the harness exited or timed out before its first model call."""


class PolarEnv(gym.Env[ModelRequest, ModelReply]):
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, family: str, *, harness: str | Harness = "builtin", sandbox: str = "local",
                 suite: str | None = None,
                 max_turns: int = DEFAULT_MAX_TURNS, time_limit_s: float | None = None, max_tokens: int | None = None,
                 pool: int = 0, render_mode: str | None = None):
        """
        Args:
            family: the env family (`code`); `gym.make("polar/Code-v0")` fills it in.
            harness: the agent harness driving the episode: a registered name (`builtin`, `claude-code`, ...)
                or any object implementing `polar.protocols.Harness`.
            sandbox: where the agent's commands run (`local` = bubblewrap, `process` = unisolated).
            suite: a bundled suite name or a directory of tasks; None for the family's default.
            max_turns: model calls before the episode is truncated.
            time_limit_s: wall-clock budget of one episode, from reset to the last step; None for the task's own
                (a Harbor task's `[agent] timeout_sec`), else `DEFAULT_TIME_LIMIT_S`.
            max_tokens: sampled tokens (from replies that carry token ids) before truncation; None for no cap. A
                trainer may lower it mid-episode, through any wrappers, with `env.set_wrapper_attr("max_tokens", n)`:
                the first step after which the episode has sampled `n` or more truncates it.
            pool: sandboxes to keep started ahead of need (0: start each on demand).
        """
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.family: EnvFamily = load_family(family)
        self.tasks = self.family.load_tasks(suite)
        self.harness = make_harness(harness) if isinstance(harness, str) else harness
        self.backend = make_backend(sandbox) if pool <= 0 else PooledBackend(make_backend(sandbox), pool)
        self.suite = suite or self.family.default_suite
        self.sandbox_name = sandbox
        self.max_turns, self.time_limit_s, self.max_tokens = max_turns, time_limit_s, max_tokens
        self.render_mode = render_mode
        self.observation_space = ModelRequestSpace()
        self.action_space = ModelReplySpace()
        self._episode: _Episode | None = None

    @property
    def task_ids(self) -> list[str]:
        return [t.id for t in self.tasks]

    # --- Gymnasium API (sync facade over the async core) -----------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode. `options`: `task_id` picks the task (else the seed does); `policy` names who answers
        (a `polar.trace.Named` or its dict), recorded in the trace. `info["task"]` is the task, for oracles."""
        return runtime.run(self._areset(seed, options))

    def step(self, action: ModelReply | dict | str | PolicyFailure):
        """Answer the pending model call with the policy's reply (or say it could not: a `PolicyFailure`)."""
        return runtime.run(self._astep(action))

    async def areset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        return await runtime.run_async(self._areset(seed, options))

    async def astep(self, action: ModelReply | dict | str | PolicyFailure):
        return await runtime.run_async(self._astep(action))

    def close(self) -> None:
        if self._episode is not None:
            runtime.run(self._finish_quietly())
        if isinstance(self.backend, PooledBackend):
            runtime.run(self.backend.close())

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self._episode is None:
            return None
        last = self._episode.turns[-1] if self._episode.turns else None
        request = self._episode.pending or (last.request if last else None)
        lines = [f"[{self._episode.task.id}] turn {len(self._episode.turns)}"]
        if request is not None and request.messages:
            lines.append(f"{request.messages[-1].get('role')}: {request.messages[-1].get('content')}")
        return "\n".join(lines)

    # --- the episode -----------------------------------------------------------------------------------

    async def _areset(self, seed: int | None, options: dict[str, Any] | None):
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"reset(options=...) takes a dict such as {{'task_id': {self.task_ids[0]!r}}} or None, "
                            f"not {type(options).__name__}")
        super().reset(seed=seed)
        options = options or {}
        await self._finish_quietly()
        task = self._pick_task(options.get("task_id"))
        policy = options.get("policy")
        budget = self.time_limit_s or getattr(task, "agent_timeout_s", None) or DEFAULT_TIME_LIMIT_S
        ep = _Episode(
            task=task,
            episode_id=draw_episode_id(self.np_random),
            seed=seed,
            policy=Named.model_validate(policy) if policy is not None else None,
            started_at=_now(),
            time_limit_s=budget,
            deadline=time.monotonic() + budget,
        )
        self._episode = ep
        try:
            # off the loop: a family may build the task's image or environment here (minutes, once per image), and
            # the loop meanwhile steps every other episode of the process
            spec = await asyncio.to_thread(self.family.sandbox_spec, task, backend=self.sandbox_name)
            spec = replace(spec, mounts=spec.mounts + self.harness.sandbox_mounts())
            ep.sandbox = await self.backend.start(spec)
            setup = await self.family.setup(task, ep.sandbox)
            ep.tools, ep.state = setup.tools, setup.state
            await ep.sandbox.mark_processes()  # what setup started (the task's services) outlives the agent's
            ep.run = await self.harness.launch(task, ep.sandbox, ep.tools)
        except (SandboxError, TaskFormatError) as e:  # this task cannot start here: an episode that says why
            await self._stop_episode()
            first = HarnessExit(error=str(e))
            ep.ended_early = ("sandbox_error", f"the task could not start: {type(e).__name__}: {e}")
        except BaseException:
            await self._finish_quietly()
            raise
        if ep.run is not None:
            try:
                first = await _wait(ep.run.advance(None), ep.deadline - time.monotonic())
            except TimeoutError:
                first = HarnessExit(error="timeout")
        if isinstance(first, HarnessExit):  # no model call at all: the next step ends the episode
            ep.ended_early = ep.ended_early or (
                ("timeout", f"no model call within the {ep.time_limit_s:g}s time limit") if first.error == "timeout"
                else ("harness_error" if first.error else "completed", first.error))
            first = ModelRequest(messages=[])
        first = first.model_copy(update={"episode_id": ep.episode_id})
        ep.pending, ep.observed_at = first, time.monotonic()
        info = self._info()
        if ep.ended_early:
            info["status"] = ep.ended_early[0]
        return first, info

    def _pick_task(self, task_id: str | None):
        if task_id is not None:
            return select_tasks(self.tasks, [task_id])[0]
        return self.tasks[int(self.np_random.integers(len(self.tasks)))]

    async def _astep(self, action: ModelReply | dict | str | PolicyFailure):
        failed = action if isinstance(action, PolicyFailure) else None
        reply = ModelReply() if failed else ModelReply.coerce(action)
        ep = self._episode
        if ep is None or ep.done or ep.pending is None:
            raise RuntimeError("no model call is pending: call reset() before step(), and again after an episode ends")
        assert ep.run is not None or ep.ended_early
        started = time.monotonic()
        request, ep.pending = ep.pending, None
        status: str | None = None
        error: str | None = None
        nxt: ModelRequest | HarnessExit | None = None
        try:
            if ep.ended_early:
                status, error = ep.ended_early
            elif failed:
                status, error = "policy_error", failed.error
            else:
                assert ep.run is not None
                nxt = await _wait(ep.run.advance(reply), ep.deadline - started)
        except TimeoutError:
            status, error = "timeout", f"the episode's {ep.time_limit_s:g}s time limit ran out"
        except SandboxError as e:
            status, error = "sandbox_error", str(e)
        except HarnessError as e:
            status, error = "harness_error", str(e)
        if not failed:
            ep.turns.append(Turn(index=len(ep.turns), request=request, reply=reply,
                                 policy_latency_s=started - ep.observed_at, env_latency_s=time.monotonic() - started))
        ep.tokens += len(reply.token_ids or ())
        if isinstance(nxt, HarnessExit):
            status, error = ("harness_error", nxt.error) if nxt.error else ("completed", None)
        elif status is None and len(ep.turns) >= self.max_turns:
            status, error = "truncated", f"reached max_turns={self.max_turns}"
        elif status is None and self.max_tokens is not None and ep.tokens >= self.max_tokens:
            status, error = "truncated", f"reached max_tokens={self.max_tokens}"
        if status is None:
            assert isinstance(nxt, ModelRequest)
            nxt = nxt.model_copy(update={"episode_id": ep.episode_id})
            ep.pending, ep.observed_at = nxt, time.monotonic()
            return nxt, 0.0, False, False, self._info()
        trace = await self._finish(status, error)
        truncated = status in ("truncated", "timeout")
        info = self._info() | {"status": trace.status, "reward_components": dict(trace.reward_components),
                               "trace": trace}
        return ModelRequest(messages=[]), trace.reward, not truncated, truncated, info

    async def _finish(self, status: str, error: str | None) -> Trace:
        """Stop the harness, kill what the agent started, grade the sandbox in a fresh shell (for every status but a
        broken sandbox), stop everything, build the trace."""
        ep = self._episode
        assert ep is not None
        ep.done = True
        grade = Grade(self.family.reward.zeros(), error="the sandbox broke or never started; nothing to grade")
        if status != "sandbox_error" and ep.sandbox is not None:
            try:
                run, ep.run = ep.run, None
                if run is not None:
                    await run.stop()
                await ep.sandbox.reset_processes()
                grade = await self.family.grade(ep.task, ep.sandbox, self.backend, ep.state)
            except SandboxError as e:  # the sandbox broke under grading: the sandbox's failure, not the verifier's
                grade = Grade(self.family.reward.zeros(), error=f"grading failed: the sandbox broke: {e}")
                status, error = "sandbox_error", grade.error
            except (HarnessError, OSError) as e:
                grade = Grade(self.family.reward.zeros(), error=f"grading failed: {e}")
        if grade.tampered is not None:
            status, error = "tampered", grade.tampered
        elif grade.error is not None and status in ("completed", "truncated", "timeout"):  # a cut-short one too
            ended = "" if status == "completed" else f" (the episode itself ended {status}: {error})"
            status, error = "verifier_error", grade.error + ended
        await self._stop_episode()
        reward = grade.reward(self.family.reward)
        return Trace(
            episode_id=ep.episode_id, env_id=self.family.env_id, env_version=self.family.version, task_id=ep.task.id,
            suite=str(self.suite), harness=Named(name=self.harness.name, version=self.harness.version),
            sandbox=self.sandbox_name, policy=ep.policy or _policy_from(ep.turns), seed=ep.seed,
            started_at=ep.started_at, ended_at=_now(), status=status, error=error, turns=ep.turns,
            verifier_log=grade.log, artefact=grade.artefact, reward=reward,
            reward_components=grade.components, polar_version=__version__,
        )

    async def _stop_episode(self) -> None:
        ep = self._episode
        if ep is None:
            return
        async with contextlib.AsyncExitStack() as stack:  # each one stops even when another fails; run first
            for stop in (ep.sandbox and ep.sandbox.stop, ep.tools and ep.tools.aclose, ep.run and ep.run.stop):
                if stop:
                    stack.push_async_callback(stop)
            ep.run = ep.tools = ep.sandbox = None

    async def _finish_quietly(self) -> None:
        """Abandon the running episode, if any, without grading it."""
        try:
            await self._stop_episode()
        finally:
            self._episode = None

    def _info(self) -> dict[str, Any]:
        ep = self._episode
        assert ep is not None
        return {"task_id": ep.task.id, "task": ep.task, "episode_id": ep.episode_id, "turn": len(ep.turns)}


async def _wait(coro, timeout: float):
    if timeout <= 0:
        coro.close()
        raise TimeoutError
    return await asyncio.wait_for(coro, timeout)


def _policy_from(turns: list[Turn]) -> Named | None:
    model = next((t.reply.model for t in turns if t.reply.model), None)
    return Named(name="unknown", model=model) if model else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
