"""Scratch folders: a process killed with SIGKILL leaves its own behind, and the next process removes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

MAKE = ("import sys, tempfile; from polar.scratch import scratch_root; "
        "print(tempfile.mkdtemp(prefix='polar-code-grade-', dir=scratch_root()), flush=True); "
        "sys.stdin.read()")
"""Makes a scratch folder, prints it, and lives until its stdin closes."""


def holder() -> tuple[subprocess.Popen, Path]:
    proc = subprocess.Popen([sys.executable, "-c", MAKE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def test_a_killed_process_s_scratch_is_swept_and_a_live_one_s_is_kept():
    from polar.scratch import sweep

    killed, left = holder()
    alive, kept = holder()
    try:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        assert left.is_dir()  # nothing ran at its death
        swept = sweep()
        assert left.parent in swept and not left.parent.exists()
        assert kept.is_dir() and kept.parent not in swept
        assert oct(kept.parent.stat().st_mode & 0o777) == "0o711"  # sandbox uids pass through to their mounts
    finally:
        alive.communicate("")
    assert not kept.parent.exists()  # a normal exit removes its own


def test_the_sweep_leaves_links_and_lockless_folders_alone(tmp_path):
    """A link named like a scratch folder (to somewhere that must not be removed) and a folder still being made
    (no lock yet) stay."""
    import tempfile

    from polar.scratch import LOCK, PREFIX, sweep

    precious = tmp_path / "precious"
    (precious / LOCK).parent.mkdir()
    (precious / LOCK).touch()
    link = Path(tempfile.gettempdir()) / f"{PREFIX}planted-link"
    making = Path(tempfile.mkdtemp(prefix=PREFIX))
    link.symlink_to(precious)
    try:
        swept = sweep()
        assert link not in swept and making not in swept and (precious / LOCK).exists() and making.is_dir()
    finally:
        link.unlink()
        making.rmdir()
