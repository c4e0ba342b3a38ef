"""Reward spec: named components, each weighted and capped; the scalar is their capped sum.

The outcome component dominates; process components (partial credit) are capped so they can never
outweigh solving the task, and the total is capped at `max_total`. The components are always reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class RewardComponent:
    name: str
    weight: float
    cap: float
    """The most this component can contribute, after weighting."""
    kind: Literal["outcome", "process"] = "outcome"
    description: str = ""


@dataclass(frozen=True)
class RewardSpec:
    components: tuple[RewardComponent, ...]
    max_total: float = 1.0

    def score(self, values: dict[str, float]) -> float:
        """The scalar reward for these component values; a missing component counts 0."""
        unknown = set(values) - {c.name for c in self.components}
        if unknown:
            raise ValueError(f"unknown reward components {sorted(unknown)}; declared: {self.names()}")
        return min(sum(self.contributions(values).values()), self.max_total)

    def contributions(self, values: dict[str, float]) -> dict[str, float]:
        """What each component adds to the scalar: its raw value times its weight, capped (a missing one: 0)."""
        return {c.name: min(c.weight * float(values.get(c.name, 0.0)), c.cap) for c in self.components}

    @property
    def outcome(self) -> str:
        """The name of the outcome component: an episode passes (pass@k, admission) when it reaches 1.0."""
        return next(c.name for c in self.components if c.kind == "outcome")

    def names(self) -> list[str]:
        return [c.name for c in self.components]

    def zeros(self) -> dict[str, float]:
        return {c.name: 0.0 for c in self.components}
