"""Lazy chunking helpers."""

from collections.abc import Iterable, Iterator
from typing import Any


def chunked(iterable: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Yield lists of `size` consecutive elements (the last may be shorter)."""
    raise NotImplementedError


def windowed(iterable: Iterable[Any], size: int, step: int = 1) -> Iterator[tuple[Any, ...]]:
    """Yield complete windows of `size` elements starting every `step` elements."""
    raise NotImplementedError
