"""Lazy chunking helpers."""

from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any


def chunked(iterable: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Yield lists of `size` consecutive elements (the last may be shorter)."""
    if size < 1:
        raise ValueError("size must be >= 1")
    return _chunks(iter(iterable), size)


def _chunks(iterator: Iterator[Any], size: int) -> Iterator[list[Any]]:
    while chunk := list(islice(iterator, size)):
        yield chunk


def windowed(iterable: Iterable[Any], size: int, step: int = 1) -> Iterator[tuple[Any, ...]]:
    """Yield complete windows of `size` elements starting every `step` elements."""
    if size < 1 or step < 1:
        raise ValueError("size and step must be >= 1")
    return _windows(iter(iterable), size, step)


def _windows(iterator: Iterator[Any], size: int, step: int) -> Iterator[tuple[Any, ...]]:
    window: deque[Any] = deque(islice(iterator, size), maxlen=size)
    while len(window) == size:
        yield tuple(window)
        if step <= size:
            new = list(islice(iterator, step))
            if len(new) < step:
                return
            window.extend(new)
        else:
            # Skip the elements between this window's end and the next window's start.
            skipped = list(islice(iterator, step - size))
            if len(skipped) < step - size:
                return
            window = deque(islice(iterator, size), maxlen=size)
