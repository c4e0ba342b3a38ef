"""Task formats, loaders and the bundled suites; `select_tasks` is the one check of task ids a user names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from polar.errors import UnknownNameError


def select_tasks(tasks: Sequence[Any], wanted: Sequence[str] | None) -> list[Any]:
    """The tasks named in `wanted`, in its order (all of them when None); an id not among them is an
    UnknownNameError listing the ids there are."""
    if wanted is None:
        return list(tasks)
    by_id = {task.id: task for task in tasks}
    if unknown := [w for w in wanted if w not in by_id]:
        raise UnknownNameError("task id", unknown[0], list(by_id))
    return [by_id[w] for w in wanted]
