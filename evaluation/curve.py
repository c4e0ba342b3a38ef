"""Learning curves: one row per training step (`curve.jsonl` in a `polar train grpo` run folder), read and plotted.

`polar train grpo` writes them; `polar report` shows a training run's curve beside eval runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polar.errors import PolarError

CURVE, PLOT = "curve.jsonl", "curve.png"


@dataclass(frozen=True)
class StepRow:
    """One training step, as `curve.jsonl` stores it."""

    step: int
    reward: float
    """Mean episode reward of the step's rollouts."""
    pass_rate: float
    """Share of the step's episodes that solved their task (the env's outcome component reached 1)."""
    group_spread: float
    """Mean over GRPO groups of the rewards' standard deviation: 0 means no group had a signal to learn from."""
    episodes: int
    tokens: int
    """Tokens the model sampled this step, every chain counted."""
    seconds: float
    weights: str
    """`weights_fingerprint` of the model that sampled this step's episodes."""
    loss: float | None
    episode_ids: list[str]
    logp_diff_mean: float | None = None
    """Mean over the step's trained tokens of |the sampler's logprob - the trainer's, recomputed|: how far the engine
    that sampled is from the weights being trained (float error alone when both are the model in this process)."""
    logp_diff_max: float | None = None


def read_curve(run: Path) -> list[StepRow]:
    """The rows of a run folder's `curve.jsonl`; a broken line raises PolarError naming it."""
    rows = []
    path = Path(run) / CURVE
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            rows.append(StepRow(**json.loads(line)))
        except (ValueError, TypeError) as e:
            raise PolarError(f"{path}:{lineno}: not a curve row ({e}); rerun its `polar train grpo`") from None
    return rows


def plot_curve(rows: list[StepRow], title: str) -> Any:
    """The learning curve: mean reward with its group spread, and the pass rate, per step."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 3.6), dpi=110)
    axes = figure.subplots()
    steps = [r.step for r in rows]
    rewards = [r.reward for r in rows]
    axes.plot(steps, rewards, marker="o", label="mean reward")
    axes.fill_between(steps, [r.reward - r.group_spread for r in rows], [r.reward + r.group_spread for r in rows],
                      alpha=0.2, label="± spread within groups")
    axes.plot(steps, [r.pass_rate for r in rows], marker="s", label="pass rate")
    axes.set(xlabel="step", ylabel="per episode", title=title, ylim=(-0.05, 1.05))
    axes.legend(loc="upper left", fontsize="small")
    figure.tight_layout()
    return figure
