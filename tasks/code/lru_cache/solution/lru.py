"""A least-recently-used cache."""

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any


class LRUCache:
    """Fixed-capacity mapping evicting the least recently used entry."""

    def __init__(self, capacity: int) -> None:
        """Create an empty cache holding at most `capacity` entries."""
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self._capacity = capacity
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._hits = 0
        self._misses = 0

    def get(self, key: Hashable, default: Any = None) -> Any:
        """Return the value for key (marking it used) or default."""
        if key in self._data:
            self._hits += 1
            self._data.move_to_end(key)
            return self._data[key]
        self._misses += 1
        return default

    def put(self, key: Hashable, value: Any) -> tuple[Hashable, Any] | None:
        """Insert or update key; return the evicted (key, value) if any."""
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self._capacity:
            return self._data.popitem(last=False)
        return None

    def peek(self, key: Hashable, default: Any = None) -> Any:
        """Return the value for key without marking it used."""
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        """Membership test without side effects."""
        return key in self._data

    def __len__(self) -> int:
        """Number of entries."""
        return len(self._data)

    def keys(self) -> list[Hashable]:
        """Keys from least to most recently used."""
        return list(self._data)

    def stats(self) -> tuple[int, int]:
        """Return (hits, misses) over all get calls."""
        return self._hits, self._misses
