"""Path lookups in nested JSON-like data."""

import re
from typing import Any

_MISSING: Any = object()
_WILDCARD: Any = object()

_NAME = re.compile(r"[^.\[\]\"']+")
_INDEX = re.compile(r"\[(-?[0-9]+)\]")
_QUOTED = re.compile(r"\[(?:\"([^\"]*)\"|'([^']*)')\]")


def _parse(path: str) -> list[Any]:
    """Return a list of segments: str (key), int (index) or _WILDCARD."""
    segments: list[Any] = []
    pos = 0
    while pos < len(path):
        if path[pos] == "[":
            if path.startswith("[*]", pos):
                segments.append(_WILDCARD)
                pos += 3
                continue
            match = _INDEX.match(path, pos)
            if match:
                segments.append(int(match.group(1)))
            else:
                match = _QUOTED.match(path, pos)
                if not match:
                    raise ValueError(f"bad bracket segment at {pos} in {path!r}")
                key = match.group(1) if match.group(1) is not None else match.group(2)
                segments.append(key)
            pos = match.end()
            continue
        if segments or pos > 0:
            if path[pos] != ".":
                raise ValueError(f"expected '.' or '[' at {pos} in {path!r}")
            pos += 1
        match = _NAME.match(path, pos)
        if not match:
            raise ValueError(f"expected a name at {pos} in {path!r}")
        name = match.group(0)
        segments.append(_WILDCARD if name == "*" else name)
        pos = match.end()
    return segments


def _select(values: list[Any], segment: Any) -> list[Any]:
    out = []
    for value in values:
        if segment is _WILDCARD:
            if isinstance(value, dict):
                out.extend(value.values())
            elif isinstance(value, list):
                out.extend(value)
        elif isinstance(segment, int):
            if isinstance(value, list) and -len(value) <= segment < len(value):
                out.append(value[segment])
        elif isinstance(value, dict) and segment in value:
            out.append(value[segment])
    return out


def get(data: Any, path: str, default: Any = _MISSING) -> Any:
    """Return the single value at `path`, or `default` / KeyError when absent."""
    segments = _parse(path)
    if any(s is _WILDCARD for s in segments):
        raise ValueError("wildcards are only allowed in get_all")
    values = [data]
    for segment in segments:
        values = _select(values, segment)
    if values:
        return values[0]
    if default is _MISSING:
        raise KeyError(path)
    return default


def get_all(data: Any, path: str) -> list[Any]:
    """Return every value selected by `path` (wildcards allowed)."""
    values = [data]
    for segment in _parse(path):
        values = _select(values, segment)
    return values
