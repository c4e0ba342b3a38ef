"""`polar tasks admit SUITE`: grade every task of a suite for real, several at once, with a progress bar.

A SWE-bench suite gets swebench's own checks (`polar.envs.swe.admission`: the gold patch resolves; an empty
patch and test-sabotaging ones do not). Any other suite (Code, Terminal, Web) is played through its env the way
an agent plays it, with the built-in harness: the oracle policy, which replays the reference solution through
the harness's tools, must score 1, and a policy that does nothing must score 0. Which family a suite belongs to
is found by loading it (`--env` says it outright).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from polar.envs.registration import env_family
from polar.errors import PolarError, TaskFormatError, UnknownNameError
from polar.tasks import select_tasks

if TYPE_CHECKING:
    from polar.trace import Trace

PLAYED = ("polar/Code-v0", "polar/Terminal-v0", "polar/Web-v0")
"""The envs whose suites are admitted by playing them; tried in this order when `--env` is not given."""
MAX_TURNS = 200
"""Enough for the longest reference solution: the oracle takes one turn per step."""
TIME_LIMIT_S = 600.0


@dataclass
class Verdict:
    task_id: str
    reasons: list[str] = field(default_factory=list)

    @property
    def admitted(self) -> bool:
        return not self.reasons


def find_env(suite: str, env_id: str | None = None) -> tuple[str, list[Any]]:
    """The env a suite is for and its tasks, loaded once: `env_id`'s family's when given, else a played family's
    that loads it, else SWE-v0's (whose loader also takes dataset names, so it is tried last)."""
    if env_id is not None:
        return env_id, env_family(env_id)().load_tasks(suite)
    for candidate in PLAYED:
        try:
            return candidate, env_family(candidate)().load_tasks(suite)
        except (UnknownNameError, TaskFormatError, OSError, ValueError):
            continue
    return "polar/SWE-v0", env_family("polar/SWE-v0")().load_tasks(suite)


def _outcome(trace: Trace | str, want: float) -> str | None:
    """Why an episode fails admission (it should have scored `want`), or None."""
    if isinstance(trace, str):
        return trace
    if trace.status != "completed" or trace.reward != want:
        return f"reward {trace.reward:g} ({trace.status}{': ' + trace.error if trace.error else ''})"
    return None


async def admit_played(env_id: str, suite: str, sandbox: str, jobs: int, ids: list[str],
                       progress: Callable[[Verdict], None] | None = None) -> list[Verdict]:
    """Play each task twice, with the oracle and doing nothing, `jobs` episodes at a time; one env per worker."""
    import gymnasium as gym

    from polar.envs.registration import register_envs
    from polar.evaluation.policies import OraclePolicy, ScriptedPolicy
    from polar.evaluation.runner import play_episode

    register_envs()

    def make_env() -> Any:
        return gym.make(env_id, harness="builtin", sandbox=sandbox, suite=suite, max_turns=MAX_TURNS,
                        time_limit_s=TIME_LIMIT_S, disable_env_checker=True)

    policies = {"oracle": (OraclePolicy(), 1.0), "no-op": (ScriptedPolicy(["submit"]), 0.0)}
    queue: asyncio.Queue[str] = asyncio.Queue()
    for task_id in ids:
        queue.put_nowait(task_id)
    verdicts: list[Verdict] = []

    async def worker() -> None:
        env = await asyncio.to_thread(make_env)
        try:
            while not queue.empty():
                verdict = Verdict(queue.get_nowait())
                for label, (policy, want) in policies.items():
                    try:
                        trace: Trace | str = await play_episode(env, policy, seed=0, task_id=verdict.task_id)
                    except PolarError as e:  # a task that cannot even start (a docker-only task run locally)
                        trace = f"{type(e).__name__}: {e}"
                    if (why := _outcome(trace, want)) is not None:
                        verdict.reasons.append(f"{label} should score {want:g}: {why}")
                verdicts.append(verdict)
                if progress is not None:
                    progress(verdict)
        finally:
            await asyncio.to_thread(env.close)

    await asyncio.gather(*(worker() for _ in range(max(1, min(jobs, len(ids))))))
    return sorted(verdicts, key=lambda v: ids.index(v.task_id))


def cmd_tasks_admit(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    env_id, tasks = find_env(args.suite, args.env)
    wanted = args.tasks.split(",") if args.tasks else None
    if env_id == "polar/SWE-v0":
        from polar.envs.swe.cli import admit_swe_suite

        return admit_swe_suite(tasks, args.suite, args.sandbox, args.jobs, wanted)
    ids = [task.id for task in select_tasks(tasks, wanted)]
    bar = tqdm(total=len(ids), unit="task", dynamic_ncols=True, desc=f"{env_id} {args.suite}")
    rejected = 0

    def progress(verdict: Verdict) -> None:
        nonlocal rejected
        if not verdict.admitted:
            rejected += 1
            bar.write(f"REJECTED {verdict.task_id}: " + "; ".join(verdict.reasons))
        bar.set_postfix(rejected=rejected)
        bar.update(1)

    started = time.monotonic()
    try:
        verdicts = asyncio.run(admit_played(env_id, args.suite, args.sandbox, args.jobs, ids, progress))
    finally:
        bar.close()
    admitted = sum(v.admitted for v in verdicts)
    print(f"{admitted}/{len(verdicts)} task(s) of {args.suite} ({env_id}) admitted in the {args.sandbox} sandbox "
          f"in {time.monotonic() - started:.0f}s: the oracle scores 1, doing nothing scores 0")
    return 0 if admitted == len(verdicts) else 1


def add_parser(subparsers: Any) -> None:
    """Register `polar tasks admit` on the `polar` command's subparsers."""
    tasks = subparsers.add_parser("tasks", help="check task suites").add_subparsers(dest="tasks_command",
                                                                                    required=True)
    admit = tasks.add_parser("admit", help="grade every task for real: SWE-bench instances by swebench (gold "
                                           "resolves, empty and test-sabotaging patches do not), any other task "
                                           "through its env (the oracle scores 1, doing nothing 0)")
    admit.add_argument("suite", help="a bundled suite (code-mini, swe-mini, terminal-mini, web-mini, ...), a folder "
                                     "or file of tasks, or a dataset")
    admit.add_argument("--env", help="the env id the suite is for (default: found by loading the suite)")
    admit.add_argument("--sandbox", default="local", help="local (bubblewrap) | docker")
    admit.add_argument("--jobs", "-j", type=int, default=2, help="tasks admitted at once")
    admit.add_argument("--tasks", help="comma-separated task ids (default: all)")
    admit.set_defaults(fn=cmd_tasks_admit)
