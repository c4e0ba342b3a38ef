"""`polar tasks admit SUITE`: grade every task of a suite for real, several at once; one entry, one result type.

Which family a suite belongs to is found by loading it (`--env` says it outright); each loader's error is kept, so
a suite no loader takes says what each one found wrong. The checks per family:
- SWE-bench suites get swebench's own checks (`polar.envs.swe.admission`: the gold patch resolves; an empty patch
  and test-sabotaging ones do not).
- Any other suite (Code, Terminal, Web) is played through its env the way an agent plays it, with the built-in
  harness: the oracle policy, which replays the reference solution through the harness's tools, must score 1,
  and a policy that does nothing must score 0.
A task that cannot run in the chosen sandbox at all (`SandboxUnsupported`: a docker-only task in the local one) is
skipped there, neither admitted nor rejected. Every check returns `polar.protocols.Admission`; the CLI and the
tests both call `admit_suite`.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polar.envs.registration import SWE, env_family, find_env
from polar.errors import PolarError, SandboxUnsupported
from polar.protocols import Admission
from polar.tasks import select_tasks

if TYPE_CHECKING:
    from polar.trace import Trace

MAX_TURNS = 200
"""Enough for the longest reference solution through the built-in harness."""


VERIFIER_LINES = 6
"""Lines of the verifier's log a rejection quotes: a task's author sees why without re-running it."""


def _outcome(trace: Trace, want: float) -> str | None:
    """Why an episode fails admission (it should have scored `want`), or None."""
    if trace.status == "truncated" and (trace.error or "").startswith("reached max_turns"):
        return f"needs more than {len(trace.turns)} turns ({trace.error}): raise the budget or shorten the solution"
    if trace.status != "completed" or trace.reward != want:
        said = " | ".join(line.strip() for line in trace.verifier_log.strip().splitlines()[-VERIFIER_LINES:])
        return (f"reward {trace.reward:g} ({trace.status}{': ' + trace.error if trace.error else ''})" +
                (f"; the verifier's log ends: {said}" if said else ""))
    return None


async def _play(env: Any, task_id: str) -> Admission:
    """The oracle must score 1 and doing nothing 0, each in a fresh episode of `env`."""
    from polar.evaluation.runner import play_episode
    from polar.policies import OraclePolicy, ScriptedPolicy

    admission = Admission(task_id)
    polar_env = env.unwrapped
    try:
        polar_env.family.sandbox_spec(select_tasks(polar_env.tasks, [task_id])[0], backend=polar_env.sandbox_name)
    except SandboxUnsupported as e:
        admission.skipped = str(e)
        return admission
    except PolarError as e:  # the task's sandbox cannot be described (a Dockerfile COPY of a file it lacks): this
        admission.reasons.append(f"its sandbox cannot be made: {type(e).__name__}: {e}")  # task's fault alone
        return admission
    for label, policy, want in (("oracle", OraclePolicy(), 1.0), ("no-op", ScriptedPolicy(["submit"]), 0.0)):
        try:
            trace = await play_episode(env, policy, seed=0, task_id=task_id)
        except PolarError as e:  # a harness that cannot start
            admission.reasons.append(f"{label} should score {want:g}: {type(e).__name__}: {e}")
            continue
        admission.outcomes[label] = _seen(trace)
        if (why := _outcome(trace, want)) is not None:
            admission.reasons.append(f"{label} should score {want:g}: {why}")
    return admission


UNVERIFIED = "unverified"
"""How a line of a verifier's log starts when the family's grader could not apply one of its checks to the task
(Terminal-v0: no canary could be placed): the admission report shows it and counts such tasks."""


def _seen(trace: Trace) -> str:
    """One episode of an admission in words: reward, status, the base its image was built on (docker), and a check
    the grader could not apply."""
    head = trace.verifier_log.splitlines()[:4]
    said = [line for line in head if line.startswith(("base image", UNVERIFIED))]
    return f"reward {trace.reward:g}, {trace.status}" + "".join(f"; {line}" for line in said)


async def admit_suite(suite: str, *, env_id: str | None = None, sandbox: str = "local", jobs: int = 2,
                      task_ids: Sequence[str] | None = None, strict: bool = False,
                      progress: Callable[[Admission], None] | None = None) -> tuple[str, list[Admission]]:
    """Admit the suite's tasks (`task_ids`: only those), `jobs` at a time; the env id and one `Admission` per task
    in the suite's order. A task folder that does not load is rejected with its reason, after the others; `strict`
    refuses the whole suite instead (`TaskFormatError`)."""
    from polar.tasks.folders import require_all

    env_id, tasks = await asyncio.to_thread(find_env, suite, env_id)
    if strict:
        require_all(tasks, suite)
    unloaded = [Admission(name, [f"does not load: {why}"]) for name, why in getattr(tasks, "rejected", {}).items()
                if not task_ids or name in task_ids]
    selected = select_tasks(tasks, [t for t in task_ids if t not in {a.task_id for a in unloaded}]
                            if task_ids else None)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    for task in selected:
        queue.put_nowait(task)
    done: dict[str, Admission] = {}
    envs: list[Any] = []

    if env_id == SWE:
        from polar.envs.sandbox import make_backend
        from polar.envs.swe.admission import admit

        family, backend = env_family(SWE)(), make_backend(sandbox)

        def make_check() -> Any:
            return lambda task: admit(family, task, backend)
    else:
        import gymnasium as gym

        from polar.envs.registration import register_envs

        register_envs()

        def make_check() -> Any:
            env = gym.make(env_id, harness="builtin", sandbox=sandbox, suite=suite, max_turns=MAX_TURNS,
                           disable_env_checker=True)
            envs.append(env)
            return lambda task: _play(env, task.id)

    async def worker() -> None:
        check = await asyncio.to_thread(make_check)
        while not queue.empty():
            task = queue.get_nowait()
            started = time.monotonic()
            admission = await check(task)
            admission.seconds = time.monotonic() - started
            done[task.id] = admission
            if progress is not None:
                progress(admission)

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, min(jobs, len(selected))))))
    finally:
        for env in envs:
            await asyncio.to_thread(env.close)
    for admission in unloaded:
        if progress is not None:
            progress(admission)
    return env_id, [done[task.id] for task in selected] + unloaded


def cmd_tasks_admit(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    bar = tqdm(unit="task", dynamic_ncols=True, desc=f"admitting {args.suite}")
    counts = {"rejected": 0, "skipped": 0}

    def progress(admission: Admission) -> None:
        seen = "; ".join(f"{check}: {outcome}" for check, outcome in admission.outcomes.items())
        if admission.skipped is not None:
            counts["skipped"] += 1
            bar.write(f"SKIPPED {admission.task_id} in the {args.sandbox} sandbox: {admission.skipped}")
        elif not admission.admitted:  # what the checks saw, as for an admitted task, after why it failed
            counts["rejected"] += 1
            bar.write(f"REJECTED {admission.task_id}: " + "; ".join(admission.reasons) + (f" ({seen})" if seen else ""))
        else:
            bar.write(f"ADMITTED {admission.task_id}" + (f" ({seen})" if seen else ""))
        bar.set_postfix(counts)
        bar.update(1)

    started = time.monotonic()
    wanted = args.tasks.split(",") if args.tasks else None
    try:
        env_id, admissions = asyncio.run(admit_suite(args.suite, env_id=args.env, sandbox=args.sandbox,
                                                     jobs=args.jobs, task_ids=wanted, strict=args.strict,
                                                     progress=progress))
    finally:
        bar.close()
    if args.json is not None:
        args.json.write_text(json.dumps([{**dataclasses.asdict(a), "admitted": a.admitted} for a in admissions],
                                        indent=1) + "\n")
    admitted = sum(a.admitted for a in admissions)
    checks = ("the gold patch resolves, empty and test-sabotaging patches do not" if env_id == SWE
              else "the oracle scores 1, doing nothing scores 0")
    skipped = f", {counts['skipped']} skipped (they need another sandbox)" if counts["skipped"] else ""
    print(f"{admitted}/{len(admissions)} task(s) of {args.suite} ({env_id}) admitted in the {args.sandbox} sandbox"
          f"{skipped} in {time.monotonic() - started:.0f}s: {checks}")
    if unverified := [a.task_id for a in admissions if any(f"; {UNVERIFIED}" in o for o in a.outcomes.values())]:
        print(f"{len(unverified)}/{len(admissions)} task(s) ({len(unverified) / len(admissions):.0%}) graded "
              f"{UNVERIFIED} by one of the family's checks (their outcomes say which): {', '.join(unverified)}")
    return 0 if counts["rejected"] == 0 and admitted + counts["skipped"] == len(admissions) else 1


def add_parser(subparsers: Any) -> None:
    """Register `polar tasks admit` and `polar tasks convert` on the `polar` command's subparsers."""
    from polar.envs.swe.environment import REPOS_HELP, ReposOption
    from polar.tasks.convert import add_parser as add_convert

    tasks = subparsers.add_parser("tasks", help="check and convert task suites").add_subparsers(dest="tasks_command",
                                                                                    required=True)
    admit = tasks.add_parser("admit", help="grade every task for real: SWE-bench instances by swebench (gold "
                                           "resolves, empty and test-sabotaging patches do not), any other task "
                                           "through its env (the oracle scores 1, doing nothing 0)")
    admit.add_argument("suite", help="a bundled suite (code-mini, swe-mini, terminal-mini, web-mini, ...), a folder "
                                     "or file of tasks, or a dataset")
    admit.add_argument("--env", help="the env id the suite is for (default: found by loading the suite)")
    admit.add_argument("--sandbox", default="local", help="local (bubblewrap) | docker")
    admit.add_argument("--jobs", "-j", type=int, default=2, help="tasks admitted at once")
    admit.add_argument("--json", type=Path, metavar="FILE", help="also write each task's admission (its checks' "
                                                                  "outcomes, reasons, skip) to FILE as JSON")
    admit.add_argument("--tasks", help="comma-separated task ids (default: all)")
    admit.add_argument("--strict", action="store_true", help="refuse the suite when any task folder does not load "
                                                             "(default: those are rejected, the others admitted)")
    admit.add_argument("--repos", action=ReposOption, metavar="DIR", help=REPOS_HELP)
    admit.set_defaults(fn=cmd_tasks_admit)
    add_convert(tasks)
