"""The leaderboard's numbers: pass@1 with a 95% confidence interval, and the ranking order."""

from __future__ import annotations

from typing import Any

from polar.evaluation import evaluate


def wilson_interval(p: float, n: int) -> tuple[float, float]:
    """pass@1's 95% interval over `n` tasks (not episodes): tasks are what was sampled from the space of
    problems, and the k samples of one task are not independent, so this is conservative (5 tasks all
    solved give [0.57, 1], not [1, 1])."""
    if n <= 0:
        return (0.0, 1.0)
    return evaluate.wilson_interval(p, n)


def rank_key(summary: dict[str, Any], date: str, name: str) -> tuple:
    """Higher pass@1 first, then higher mean reward, then the earlier submission, then the name."""
    return (-(summary.get("pass@1") or 0.0), -(summary.get("mean_reward") or 0.0), date, name)
