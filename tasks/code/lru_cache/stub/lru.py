"""A least-recently-used cache."""

from collections.abc import Hashable
from typing import Any


class LRUCache:
    """Fixed-capacity mapping evicting the least recently used entry."""

    def __init__(self, capacity: int) -> None:
        """Create an empty cache holding at most `capacity` entries."""
        raise NotImplementedError

    def get(self, key: Hashable, default: Any = None) -> Any:
        """Return the value for key (marking it used) or default."""
        raise NotImplementedError

    def put(self, key: Hashable, value: Any) -> tuple[Hashable, Any] | None:
        """Insert or update key; return the evicted (key, value) if any."""
        raise NotImplementedError

    def peek(self, key: Hashable, default: Any = None) -> Any:
        """Return the value for key without marking it used."""
        raise NotImplementedError

    def __contains__(self, key: object) -> bool:
        """Membership test without side effects."""
        raise NotImplementedError

    def __len__(self) -> int:
        """Number of entries."""
        raise NotImplementedError

    def keys(self) -> list[Hashable]:
        """Keys from least to most recently used."""
        raise NotImplementedError

    def stats(self) -> tuple[int, int]:
        """Return (hits, misses) over all get calls."""
        raise NotImplementedError
