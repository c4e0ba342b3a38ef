"""Sequence diff based on the longest common subsequence."""

from collections.abc import Sequence
from typing import Any

Script = list[tuple[str, Any]]


def diff(a: Sequence[Any], b: Sequence[Any]) -> Script:
    """Return the canonical minimal edit script turning a into b."""
    raise NotImplementedError


def patch(a: Sequence[Any], script: Script) -> list[Any]:
    """Apply an edit script to a."""
    raise NotImplementedError


def invert(script: Script) -> Script:
    """Return the script turning the target back into the source."""
    raise NotImplementedError
