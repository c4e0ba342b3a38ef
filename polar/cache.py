"""polar's cache on this machine, and the one lock that makes building an entry of it once-only across processes.

Installs (harnesses), repository environments (SWE-v0) and images are built once per machine and shared by every
process, so two processes that want the same entry take its lock: the second waits, then finds it built.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def cache_dir(kind: str) -> Path:
    """Where entries of `kind` (`harnesses`, `swe`, ...) live: `$POLAR_CACHE/<kind>`; else, as root,
    `/var/cache/polar/<kind>`, outside /root, because sandboxes then run as uids of their own that cannot enter
    /root; else `~/.cache/polar/<kind>`."""
    if "POLAR_CACHE" in os.environ:
        return Path(os.environ["POLAR_CACHE"]).expanduser() / kind
    return Path("/var/cache/polar") / kind if os.geteuid() == 0 else Path.home() / ".cache" / "polar" / kind


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (made, with its folder, when missing) for this block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
