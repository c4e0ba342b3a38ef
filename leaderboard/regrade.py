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
        if grade.error is not None and trace.reward != 0.0:
            return (f"{label(key, trace)}: re-grading could not grade it ({grade.error}), "
                    f"yet its reward is {trace.reward:g}")
        if grade.tampered is not None and trace.reward != 0.0:
            return (f"{label(key, trace)}: re-grading found tampering ({grade.tampered}), "
                    f"yet its reward is {trace.reward:g}")
        reward = grade.reward(family.reward)
        if not math.isclose(reward, trace.reward, abs_tol=1e-9):
            return (f"{label(key, trace)}: re-graded reward {reward:g} ({_show(grade.components)}), "
                    f"recorded {trace.reward:g} ({_show(trace.reward_components)})")
        for name in family.reward.names():
            again, recorded = grade.components.get(name, 0.0), trace.reward_components.get(name, 0.0)
            if not math.isclose(again, recorded, abs_tol=1e-9):
                return f"{label(key, trace)}: re-graded component {name} is {again:g}, recorded {recorded:g}"
        return None

    async def every() -> list[str | None]:
        return await asyncio.gather(*(one(key, trace) for key, trace in sorted(checked.episodes.items())))

    return [problem for problem in runtime.run(every()) if problem]


def _show(components: dict[str, float]) -> str:
    return ", ".join(f"{name}={value:g}" for name, value in components.items())
