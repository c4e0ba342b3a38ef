"""Semantic versioning."""

from typing import NamedTuple


class Version(NamedTuple):
    """A parsed semantic version."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: tuple[str, ...] = ()


def parse(version: str) -> Version:
    """Parse a SemVer 2.0.0 string."""
    raise NotImplementedError


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 comparing the precedence of a and b."""
    raise NotImplementedError


def satisfies(version: str, spec: str) -> bool:
    """Return True if version satisfies every comparator in spec."""
    raise NotImplementedError
