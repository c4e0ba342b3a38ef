"""A tiny Lisp interpreter."""

from typing import Any


class LispError(Exception):
    """Any syntax or evaluation error."""


def evaluate(source: str) -> Any:
    """Evaluate every expression in source in a fresh environment; return the last value."""
    raise NotImplementedError
