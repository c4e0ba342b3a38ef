"""Path lookups in nested JSON-like data."""

from typing import Any

_MISSING: Any = object()


def get(data: Any, path: str, default: Any = _MISSING) -> Any:
    """Return the single value at `path`, or `default` / KeyError when absent."""
    raise NotImplementedError


def get_all(data: Any, path: str) -> list[Any]:
    """Return every value selected by `path` (wildcards allowed)."""
    raise NotImplementedError
