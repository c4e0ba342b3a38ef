"""One folder per process for its short-lived files, and the sweep of the folders that killed processes left.

A process killed with SIGKILL (a node worker lost, a driver the user kills) runs no cleanup, so its grading
folders and gateway sockets would stay in the temp dir for good. Each process's scratch folders therefore live
under one folder of its own, which it holds a lock on for as long as it lives (the kernel drops the lock when the
process dies, however it dies); the first scratch folder a process makes removes every such folder nobody holds,
and a process that exits normally removes its own.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import stat
import tempfile
from pathlib import Path

PREFIX = "polar-run-"
LOCK = ".owner.lock"
_roots: dict[int, tuple[Path, int]] = {}
"""By pid (a forked child makes its own): the folder, and the open descriptor whose lock marks it live."""


def scratch_root() -> Path:
    """This process's scratch folder, made (and the dead processes' swept) on first use. Sandboxes' uids may
    pass through it (0711) to what is mounted for them, and list nothing."""
    if (own := _roots.get(os.getpid())) is not None:
        return own[0]
    sweep()
    root = Path(tempfile.mkdtemp(prefix=PREFIX))
    root.chmod(0o711)
    lock = os.open(root / f"{LOCK}.new", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    os.rename(root / f"{LOCK}.new", root / LOCK)  # a sweep finds the lock only once it is held
    _roots[os.getpid()] = (root, lock)
    atexit.register(_remove_own, os.getpid())
    return root


def _remove_own(pid: int) -> None:
    if os.getpid() == pid:  # not in a forked child that exits through Python
        shutil.rmtree(_roots[pid][0], ignore_errors=True)


def sweep() -> list[Path]:
    """Remove the scratch folders whose process is gone (no one holds their lock); returns them."""
    removed = []
    for root in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            if not stat.S_ISDIR((st := root.lstat()).st_mode) or st.st_uid != os.geteuid():
                continue  # another user's, or a link someone planted: never ours to remove
            lock = os.open(root / LOCK, os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue  # gone, or being made right now (its lock is not there yet)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its process lives
        finally:
            os.close(lock)
        shutil.rmtree(root, ignore_errors=True)
        removed.append(root)
    return removed
