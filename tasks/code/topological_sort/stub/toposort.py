"""Topological sorting."""

from collections.abc import Iterable


class CycleError(ValueError):
    """Raised when the dependency graph has a cycle; see the `cycle` attribute."""

    def __init__(self, cycle: list[str]) -> None:
        super().__init__(f"cycle: {' -> '.join(cycle)}")
        self.cycle = cycle


def topo_order(deps: dict[str, Iterable[str]]) -> list[str]:
    """Return the alphabetically smallest topological order."""
    raise NotImplementedError


def levels(deps: dict[str, Iterable[str]]) -> list[list[str]]:
    """Group nodes by the length of their longest prerequisite chain."""
    raise NotImplementedError
