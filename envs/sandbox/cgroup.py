"""Per-sandbox cgroups (v2, or v1's memory, pids and cpu hierarchies) when polar may create them.

A cgroup caps the memory a sandbox actually uses, whatever its processes reserve: Node and other
runtimes that reserve large virtual address spaces break under `ulimit -v`, not under a cgroup. Where no
writable cgroup hierarchy exists, the local sandbox falls back to per-process rlimits. The CPU bandwidth
controller caps the CPU time a sandbox's processes get together; no rlimit can, so without it polar warns once.
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from functools import cache
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000
"""The CPU bandwidth period: a sandbox gets `cpus` x this much CPU time in each."""


def _writable(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


def _own(controller: str) -> str:
    """This process's cgroup path for a v1 controller ("" for the v2 line), so sandboxes nest under it."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path.lstrip("/")
    return ""


def _v2_parent() -> Path | None:
    parent = ROOT / _own("")
    controllers = parent / "cgroup.controllers"
    if controllers.exists() and {"memory", "pids"} <= set(controllers.read_text().split()) and _writable(parent):
        return parent
    return None


def _enable_v2_cpu(parent: Path) -> bool:
    if "cpu" not in (parent / "cgroup.controllers").read_text().split():
        return False
    try:
        (parent / "cgroup.subtree_control").write_text("+cpu")
    except OSError:
        return False
    return True


def _quota_us(cpus: float | None) -> int:
    return max(1000, round((cpus or 0) * PERIOD_US))  # the kernel's smallest quota is 1 ms


@cache
def _warn_uncapped_cpu(why: str) -> None:
    warnings.warn(f"sandboxes get no CPU cap on this machine: {why}; their processes may use every CPU",
                  stacklevel=3)


class Cgroup:
    """The cgroup directories of one sandbox, and the shell line that moves a process into them."""

    def __init__(self, dirs: list[Path]):
        self.dirs = dirs

    @classmethod
    def create(cls, name: str, memory_mb: int | None, max_processes: int | None,
               cpus: float | None = None) -> Cgroup | None:
        """Make the cgroup with its limits; None when this machine offers no writable hierarchy."""
        try:
            if (v2 := _v2_parent()) is not None:
                (v2 / "cgroup.subtree_control").write_text("+memory +pids")
                cpu = bool(cpus) and _enable_v2_cpu(v2)
                group = v2 / name
                group.mkdir()
                if memory_mb:
                    (group / "memory.max").write_text(str(memory_mb << 20))
                    (group / "memory.swap.max").write_text("0")
                if max_processes:
                    (group / "pids.max").write_text(str(max_processes))
                if cpu:
                    (group / "cpu.max").write_text(f"{_quota_us(cpus)} {PERIOD_US}")
                elif cpus:
                    _warn_uncapped_cpu(f"{v2} does not delegate the cpu controller")
                return cls([group])
            memory, pids, cpu_dir = (ROOT / c / _own(c) for c in ("memory", "pids", "cpu"))
            if not (_writable(memory) and _writable(pids)):
                return None
            dirs = [memory / name, pids / name]
            cpu = bool(cpus) and _writable(cpu_dir)
            if cpu:
                dirs.append(cpu_dir / name)
            elif cpus:
                _warn_uncapped_cpu(f"{cpu_dir} is not a writable cpu hierarchy")
            for d in dirs:
                d.mkdir()
            if memory_mb:
                (dirs[0] / "memory.limit_in_bytes").write_text(str(memory_mb << 20))
            if max_processes:
                (dirs[1] / "pids.max").write_text(str(max_processes))
            if cpu:
                (dirs[2] / "cpu.cfs_period_us").write_text(str(PERIOD_US))
                (dirs[2] / "cpu.cfs_quota_us").write_text(str(_quota_us(cpus)))
            return cls(dirs)
        except OSError:
            return None

    def enter_command(self) -> str:
        """Shell that moves itself into the cgroup; `exec` the sandbox after it so all of it lands there."""
        return " && ".join(f"echo $$ > {d}/cgroup.procs" for d in self.dirs)

    def remove(self, wait_s: float = 5.0) -> None:
        """Remove the (by now empty) cgroup directories, waiting briefly for dying processes to leave."""
        deadline = time.monotonic() + wait_s
        for d in self.dirs:
            while d.exists():
                with contextlib.suppress(OSError):
                    d.rmdir()
                    break
                if time.monotonic() > deadline:
                    break
                time.sleep(0.02)
