"""Re-grading: each episode's artefact is graded again, in a fresh sandbox, and must earn its recorded reward.

This is what makes a submission's numbers more than claims: the traces name what the agent produced, and the
installed env family's own verifier (`family.regrade(task, artefact, backend)`) decides what it is worth.
"""

from __future__ import annotations

import asyncio
import math
from typing import TYPE_CHECKING

from polar import runtime
from polar.envs.sandbox import make_backend
from polar.reward import RewardSpec
from polar.trace import Trace

if TYPE_CHECKING:
    from polar.leaderboard.validate import Checked, Key


def regrade_episodes(checked: Checked, sandbox: str, jobs: int = 4) -> list[str]:
    """Re-grade every episode, `jobs` at a time; one line per episode whose reward or components differ."""
    from polar.leaderboard.validate import label

    family, backend = checked.family, make_backend(sandbox)
    limit = asyncio.Semaphore(max(1, jobs))

    async def one(key: Key, trace: Trace) -> str | None:
        if trace.artefact is None:
            if trace.reward != 0.0:
                return f"{label(key, trace)}: no artefact to re-grade, yet its reward is {trace.reward:g}"
            return None
        async with limit:
            try:
                grade = await family.regrade(checked.tasks[key[0]], trace.artefact, backend)
            except ValueError as e:
                return f"{label(key, trace)}: its artefact cannot be re-graded: {e}"
        return disagreement(label(key, trace), ("re-grading", "re-graded"), family.reward, trace,
                            grade.reward(family.reward), grade.components, grade.error, grade.tampered)

    async def every() -> list[str | None]:
        return await asyncio.gather(*(one(key, trace) for key, trace in sorted(checked.episodes.items())))

    return [problem for problem in runtime.run(every()) if problem]


def disagreement(episode: str, how: tuple[str, str], spec: RewardSpec, trace: Trace, reward: float,
                 components: dict[str, float], error: str | None = None, tampered: str | None = None) -> str | None:
    """Why an outcome got again (`how`: "re-grading", "re-graded") does not bear out the trace's recorded reward
    and components, or None when it does."""
    doing, done = how
    if error is not None and trace.reward != 0.0:
        return f"{episode}: {doing} could not grade it ({error}), yet its reward is {trace.reward:g}"
    if tampered is not None and trace.reward != 0.0:
        return f"{episode}: {doing} found tampering ({tampered}), yet its reward is {trace.reward:g}"
    if not math.isclose(reward, trace.reward, abs_tol=1e-9):
        return f"{episode}: {done} reward {reward:g} ({_show(components)}), recorded {trace.reward:g} " \
               f"({_show(trace.reward_components)})"
    for name in spec.names():
        again, recorded = components.get(name, 0.0), trace.reward_components.get(name, 0.0)
        if not math.isclose(again, recorded, abs_tol=1e-9):
            return f"{episode}: {done} component {name} {again:g}, recorded {recorded:g}"
    return None


def _show(components: dict[str, float]) -> str:
    return ", ".join(f"{name}={value:g}" for name, value in components.items())
