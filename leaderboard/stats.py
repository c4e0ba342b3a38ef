"""The leaderboard's numbers: pass@1 with a 95% confidence interval, and the ranking order."""

from __future__ import annotations

import math
from typing import Any

Z95 = 1.959963984540054


def wilson_interval(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a success rate `p` over `n` trials.

    The leaderboard uses n = tasks, not episodes: tasks are what was sampled from the space of problems, and
    the k samples of one task are not independent. Averaging k samples per task only lowers each task's
    variance below p(1-p), so the interval is conservative, and unlike the normal approximation it stays
    honest at 0 and 1 (5 tasks all solved give [0.57, 1], not [1, 1]).
    """
    if n <= 0:
        return (0.0, 1.0)
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def rank_key(summary: dict[str, Any], date: str, name: str) -> tuple:
    """Higher pass@1 first, then higher mean reward, then the earlier submission, then the name."""
    return (-(summary.get("pass@1") or 0.0), -(summary.get("mean_reward") or 0.0), date, name)
