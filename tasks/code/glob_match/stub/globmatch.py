"""Glob pattern matching for /-separated paths."""


def match(pattern: str, path: str) -> bool:
    """Return True if the whole path matches the glob pattern."""
    raise NotImplementedError


def filter_paths(pattern: str, paths: list[str]) -> list[str]:
    """Return the paths matching the pattern, in order."""
    raise NotImplementedError
