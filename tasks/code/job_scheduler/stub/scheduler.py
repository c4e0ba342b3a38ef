"""Priority job scheduling with dependencies."""

from typing import Any

Job = dict[str, Any]


def simulate(jobs: list[Job], workers: int) -> dict[str, tuple[int, int, int]]:
    """Return {name: (worker, start, end)} for a simulated run."""
    raise NotImplementedError


def makespan(jobs: list[Job], workers: int) -> int:
    """Return the finishing time of the last job."""
    raise NotImplementedError


def critical_path(jobs: list[Job]) -> tuple[int, list[str]]:
    """Return the longest dependency chain (total duration, names)."""
    raise NotImplementedError
