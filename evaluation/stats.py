"""The run statistics, one definition each, used by `polar eval`, `polar report` and the leaderboard alike.

pass@k is the unbiased estimator averaged over tasks. pass@1's 95% interval is Wilson's over tasks: the tasks are
what was sampled from the space of problems, and the k samples of one task are not independent, so counting
episodes would claim more certainty than the run has (5 tasks all solved give [0.57, 1], not [1, 1]). pass@k's
95% interval is a percentile bootstrap over tasks. With nothing observed an interval is [0, 1]: nothing is excluded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054
BOOTSTRAP_RESAMPLES = 2000
INTERVALS = "95% intervals over tasks: Wilson for pass@1, a percentile bootstrap for pass@k"
"""The one sentence every page says of its intervals."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k from n samples with c correct (Chen et al., 2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def wilson_interval(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a rate `p` over `n` units (honest at 0 and 1, unlike the normal
    approximation); (0, 1) when there are none."""
    if n <= 0:
        return 0.0, 1.0
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))  # p stays inside despite rounding


def bootstrap_pass_at_k(counts: Sequence[tuple[int, int]], k: int, seed: int = 0) -> tuple[float, float, float]:
    """pass@k over the tasks with at least k samples, from (samples, correct) per task, and its percentile
    bootstrap interval; (nan, 0, 1) when no task has k samples."""
    import numpy as np

    scores = np.array([pass_at_k(n, c, k) for n, c in counts if n >= k])
    if scores.size == 0:
        return math.nan, 0.0, 1.0
    return _bootstrap_mean(scores, seed)


def _bootstrap_mean(values, seed: int) -> tuple[float, float, float]:
    """The mean of per-task `values` (a non-empty numpy array) and its 95% percentile bootstrap interval over tasks."""
    import numpy as np

    picks = np.random.default_rng(seed).integers(0, values.size, (BOOTSTRAP_RESAMPLES, values.size))
    low, high = np.percentile(values[picks].mean(axis=1), [2.5, 97.5])
    return float(values.mean()), float(low), float(high)


def paired_gain(before: Sequence[float], after: Sequence[float], seed: int = 0) -> tuple[float, float, float]:
    """The mean per-task change from `before` to `after` (the same tasks, in the same order) and its percentile
    bootstrap interval over tasks. Two runs on the same tasks share each task's difficulty, so the paired interval
    is much narrower than the gap between their two separate intervals; (nan, -1, 1) with no tasks."""
    import numpy as np

    if len(before) != len(after):
        raise ValueError(f"paired_gain needs the same tasks before and after: {len(before)} and {len(after)} rates")
    changes = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    if changes.size == 0:
        return math.nan, -1.0, 1.0
    return _bootstrap_mean(changes, seed)
