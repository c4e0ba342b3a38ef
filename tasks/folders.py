"""A suite folder's tasks, loaded folder by folder: the good ones load, each bad one is listed with its reason.

One bad task folder in a dataset of a hundred should cost that task, not the run. Every folder loader (Code-v0's,
Harbor's) goes through `load_folders`; `--strict` on `polar eval` and `polar tasks admit` calls `require_all`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from polar.errors import TaskFormatError


class TaskFormatWarning(UserWarning):
    """Some task folders of a suite did not load and were left out; `TaskList.rejected` says why."""


class TaskList(list):
    """The tasks that loaded, as a plain list, with `rejected`: each folder that did not load, by name, and why."""

    def __init__(self, tasks: Iterable[Any] = (), rejected: dict[str, str] | None = None):
        super().__init__(tasks)
        self.rejected: dict[str, str] = dict(rejected or {})


def load_folders(root: Path, folders: Iterable[Path], load_task: Callable[[Path], Any], layout: str) -> TaskList:
    """Load each folder with `load_task`; a folder it refuses (`TaskFormatError`, an unreadable file) is left out and
    named in `rejected` (with a `TaskFormatWarning`). When none loads, `TaskFormatError` lists every reason;
    `layout` says what a task folder holds, for the message when there are no folders at all."""
    tasks, rejected = [], {}
    for folder in folders:
        try:
            tasks.append(load_task(folder))
        except (ValueError, OSError) as e:  # TaskFormatError is a ValueError, as is a file that is not UTF-8
            rejected[folder.name] = str(e) or type(e).__name__
    if not tasks:
        if not rejected:
            raise TaskFormatError(f"{root}: no task directories (each holds {layout})")
        raise TaskFormatError(f"{root}: no task folder loads:\n" + _listing(rejected))
    if rejected:
        warnings.warn(f"{root}: {len(rejected)} task folder(s) do not load and are left out:\n" + _listing(rejected),
                      TaskFormatWarning, stacklevel=3)
    return TaskList(tasks, rejected)


def require_all(tasks: Iterable[Any], suite: str | None) -> None:
    """`--strict`: a suite with any task folder that did not load is refused, naming each and why."""
    rejected = getattr(tasks, "rejected", {})
    if rejected:
        raise TaskFormatError(f"suite {suite}: {len(rejected)} task folder(s) do not load (--strict refuses the "
                              "suite; without it they are left out):\n" + _listing(rejected))


def _listing(rejected: dict[str, str]) -> str:
    return "\n".join(f"  {name}: {reason.splitlines()[0] if reason else ''}" for name, reason in rejected.items())
