"""The local sandbox: bubblewrap, with a read-only host, a writable workspace, no network, limits.

Only the system directories (`/usr`, `/etc` and the `/bin`, `/lib` links) are visible, read-only; the
host's home, the project's files and everything else are absent unless a `Mount` names them. Each sandbox
gets its own pid, network (loopback only), user, IPC and UTS namespaces. When polar runs as root, each
sandbox also runs as a uid of its own, so the per-uid process limit contains a fork bomb and every
leftover process can be found and killed by uid, and where the machine lets polar create cgroups, each
sandbox gets one capping its memory and process count (else per-process rlimits do). `/tmp` and `$HOME` live
next to the workspace on disk, not in memory.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from polar.envs.sandbox.base import ShellSandbox
from polar.envs.sandbox.cgroup import Cgroup
from polar.envs.sandbox.shell import DRIVER, ShellSession, kill_quietly, limits_prelude
from polar.errors import SandboxError
from polar.protocols import SandboxSpec

_UIDS = itertools.count()
_SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def _sandbox_uid() -> int:
    """A uid no one else uses, unique per process and sandbox (root only)."""
    return 200_000 + (os.getpid() % 4096) * 256 + next(_UIDS) % 256


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    python = Path(sys.base_prefix)
    if not shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") and python.is_dir():
        args += ["--ro-bind", str(python), str(python)]
    return args


def _path_env() -> str:
    dirs = ["/usr/local/bin", "/usr/bin", "/bin"]
    if not shutil.which("python3", path=":".join(dirs)):
        dirs.insert(0, str(Path(sys.base_prefix) / "bin"))
    return ":".join(dirs)


class LocalSandbox(ShellSandbox):
    backend = "local"

    def __init__(self, spec: SandboxSpec, session: ShellSession, root: Path, uid: int | None,
                 cgroup: Cgroup | None):
        super().__init__(spec, session)
        self.root, self.uid, self.cgroup = root, uid, cgroup

    async def stop(self) -> None:
        if self.stopped:
            return
        await super().stop()
        if self.uid is not None:
            await _kill_uid(self.uid)
        if self.cgroup is not None:
            self.cgroup.remove()
        shutil.rmtree(self.root, ignore_errors=True)


def _uid_pids(uid: int) -> list[int]:
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid and _alive(name):
                    pids.append(int(name))
            except OSError:
                pass
    return pids


def _alive(pid: str) -> bool:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"


async def _kill_uid(uid: int, wait_s: float = 5.0) -> None:
    """Kill every process still running as the sandbox's uid (each is one of the sandbox's) and wait."""
    deadline = time.monotonic() + wait_s
    while (pids := _uid_pids(uid)) and time.monotonic() < deadline:
        for pid in pids:
            kill_quietly(pid)
        await asyncio.sleep(0.02)
    if pids:
        raise SandboxError(f"processes {pids} of sandbox uid {uid} survived SIGKILL for {wait_s:g}s")


class LocalBackend:
    name = "local"

    def __init__(self) -> None:
        self.bwrap = shutil.which("bwrap")
        if self.bwrap is None:
            raise SandboxError(
                "the local sandbox needs bubblewrap: run `apt-get install bubblewrap` (Debian/Ubuntu) "
                "or `dnf install bubblewrap`; or pick another backend with sandbox='docker'"
            )

    async def start(self, spec: SandboxSpec) -> LocalSandbox:
        root = Path(tempfile.mkdtemp(prefix="polar-sbx-"))
        extra = [f"dir{i}" for i in range(len(spec.writable_dirs))]
        for sub in ("workspace", "tmp", "home", *extra):
            (root / sub).mkdir()
        uid = _sandbox_uid() if os.geteuid() == 0 else None
        if uid is not None:
            for sub in ("", "workspace", "tmp", "home", *extra):
                os.chown(root / sub, uid, uid)
            os.chmod(root, 0o700)
        env = {"PATH": _path_env(), "HOME": "/home/polar", "LANG": "C.UTF-8", "TERM": "dumb", "PAGER": "cat",
               "GIT_PAGER": "cat", "TMPDIR": "/tmp", **spec.env}
        argv = [] if uid is None else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
        argv += [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "polar",
                 *_system_binds(), "--proc", "/proc", "--dev", "/dev",
                 "--bind", str(root / "tmp"), "/tmp", "--bind", str(root / "home"), "/home/polar",
                 "--bind", str(root / "workspace"), spec.workdir]
        for sub, path in zip(extra, spec.writable_dirs, strict=True):
            argv += ["--bind", str(root / sub), path]
        for m in spec.mounts:
            argv += ["--ro-bind" if m.read_only else "--bind", m.host_path, m.sandbox_path]
        argv += ["--remount-ro", "/", "--chdir", spec.workdir, "--clearenv"]
        for key, value in env.items():
            argv += ["--setenv", key, value]
        # a cgroup caps real memory use; without one, fall back to capping each process's address space
        cgroup = Cgroup.create(root.name, spec.memory_mb, spec.max_processes) if uid is not None else None
        prelude = limits_prelude(None if cgroup else spec.memory_mb, spec.max_processes)
        argv += ["bash", "--noprofile", "--norc", "-c", prelude + DRIVER]
        if cgroup is not None:
            argv = ["sh", "-c", f'{cgroup.enter_command()} && exec "$@"', "polar-sandbox", *argv]
        session = ShellSession(argv, output_limit=spec.output_limit_bytes, default_timeout=spec.command_timeout_s)
        try:
            await session.start()
        except BaseException:
            await session.close()
            if cgroup is not None:
                cgroup.remove()
            shutil.rmtree(root, ignore_errors=True)
            raise
        return LocalSandbox(spec, session, root, uid, cgroup)
