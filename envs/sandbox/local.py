"""The local sandbox: bubblewrap, with a read-only host, a writable workspace, no network, limits.

Only the system directories (`/usr`, `/etc` and the `/bin`, `/lib` links) are visible, read-only; the
host's home, the project's files and everything else are absent unless a `Mount` names them. polar's own
installation is never visible, wherever it lies (a wheel under `/usr/local` ships every bundled suite's hidden
tests and solutions as package data): its package folders, metadata and cache are covered by empty folders, its
start-up files by empty files. Each sandbox
gets its own pid, network (loopback only), user, IPC and UTS namespaces. When polar runs as root, each
sandbox also runs as a uid of its own, so the per-uid process limit contains a fork bomb and every
leftover process can be found and killed by uid, and where the machine lets polar create cgroups, each
sandbox gets one capping its memory, process count and CPU share (else per-process rlimits do). `/tmp` and
`$HOME` live next to the workspace on disk, not in memory, in one directory whose size `disk.py` caps.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import secrets
import shutil
import sys
import tempfile
import time
from functools import cache, partial
from pathlib import Path

from polar.envs.sandbox.cgroup import Cgroup
from polar.envs.sandbox.disk import CappedDir
from polar.envs.sandbox.shell import (
    DRIVER,
    ShellSandbox,
    ShellSession,
    descendants,
    kill_quietly,
    limits_prelude,
    proc_stat,
    sealed_folders,
)
from polar.errors import SandboxError
from polar.protocols import SandboxSpec

_UIDS = itertools.count()
_SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def _sandbox_uid() -> int:
    """A uid no one else uses, unique per process and sandbox (root only)."""
    return 200_000 + (os.getpid() % 4096) * 256 + next(_UIDS) % 256


def _system_binds() -> list[str]:
    args: list[str] = []
    bound = []
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
            bound.append(Path(path))
    python = Path(sys.base_prefix)
    if not shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") and python.is_dir():
        args += ["--ro-bind", str(python), str(python)]
        bound.append(python)
    return args + _hiding(bound)


@cache
def polar_installation() -> tuple[list[Path], list[Path]]:
    """(folders, files) of polar's installation on this machine: its packages' folders (their data holds hidden
    tests, solutions and suites), its metadata, its cache; its import hook and the `.pth` files that load it."""
    import importlib.util

    from polar.cache import cache_dir

    folders, files = [cache_dir("").resolve()], []
    for name in ("polar", "polar.envs", "polar.harnesses", "polar.tasks", "polar.evaluation", "polar.training",
                 "polar.leaderboard"):
        spec = importlib.util.find_spec(name)
        folders += [Path(p).resolve() for p in (spec.submodule_search_locations or [])] if spec else []
    hook = importlib.util.find_spec("_polar_gym_hook")
    sites = {folders[1].parent} | ({Path(hook.origin).resolve().parent} if hook and hook.origin else set())
    for site in sites:  # a wheel's site folder (beside the package), an editable install's checkout
        folders += [p.resolve() for p in site.glob("polar_gym-*.dist-info")]
        files += [p.resolve() for pattern in ("_polar_gym_hook.py", "__pycache__/_polar_gym_hook.*", "*polar_gym*.pth",
                                              "__editable___polar_gym*finder.py") for p in site.glob(pattern)]
    return folders, files


def _hiding(bound: list[Path]) -> list[str]:
    """bubblewrap arguments that cover each part of polar's installation that lies in a bound folder."""
    folders, files = polar_installation()
    inside = [f for f in dict.fromkeys(folders) if f.is_dir() and any(f.is_relative_to(b) for b in bound)]
    outer = [f for f in inside if not any(f != o and f.is_relative_to(o) for o in inside)]
    args = [a for f in outer for a in ("--tmpfs", str(f))]
    for f in dict.fromkeys(files):
        if f.is_file() and any(f.is_relative_to(b) for b in bound) and not any(f.is_relative_to(o) for o in outer):
            args += ["--ro-bind", "/dev/null", str(f)]
    return args


def _path_env() -> str:
    dirs = ["/usr/local/bin", "/usr/bin", "/bin"]
    if not shutil.which("python3", path=":".join(dirs)):
        dirs.insert(0, str(Path(sys.base_prefix) / "bin"))
    return ":".join(dirs)


class LocalSandbox(ShellSandbox):
    backend = "local"

    def __init__(self, spec: SandboxSpec, session: ShellSession, root: Path, uid: int | None,
                 cgroup: Cgroup | None, disk: CappedDir | None = None, anchor: _Anchor | None = None):
        super().__init__(spec, session)
        self.root, self.uid, self.cgroup, self.disk, self.anchor = root, uid, cgroup, disk, anchor

    def processes(self) -> dict[int, int]:
        """As root, every process of the sandbox's uid (whatever namespaces it made); else the bubblewrap tree."""
        return super().processes() if self.uid is None else _uid_processes(self.uid)

    async def reset_processes(self) -> None:
        """As root, shells enter the sandbox's namespaces from outside (`nsenter`), so the task's services stay.
        Otherwise the shell is bubblewrap's own child and the sandbox restarts on the same files: what setup
        started cannot survive, which is an error, not a silent loss."""
        if self.anchor is None and self._marked:
            raise SandboxError("the local sandbox keeps processes the task's setup started (its services) across a "
                               "process reset only when polar runs as root; run as root, or use sandbox='docker'")
        if self.anchor is not None and not self.anchor.alive():
            raise SandboxError("the local sandbox's anchor process is gone (killed from inside the sandbox): "
                               "nothing is left to enter; start a new sandbox")
        await super().reset_processes()

    async def stop(self) -> None:
        if self.stopped:
            return
        await super().stop()
        if self.anchor is not None:
            await self.anchor.stop()
        if self.uid is not None:
            await _kill_uid(self.uid)
        if self.cgroup is not None:
            self.cgroup.remove()
        _remove_root(self.root, self.disk)


def _make_root(disk_mb: int | None) -> tuple[Path, CappedDir | None]:
    """The sandbox's root directory: capped on polar's volume where the machine offers one, else a plain temp dir."""
    disk = CappedDir.create(f"polar-sbx-{secrets.token_hex(6)}", disk_mb) if disk_mb else None
    return (disk.path if disk else Path(tempfile.mkdtemp(prefix="polar-sbx-"))), disk


def _remove_root(root: Path, disk: CappedDir | None) -> None:
    if disk is not None:
        disk.remove()
    else:
        shutil.rmtree(root, ignore_errors=True)


class _Anchor:
    """The bubblewrap sandbox's main process when polar is root (`sleep infinity`): it holds the namespaces that
    every shell enters, so a shell can be killed and replaced while the sandbox and its services live on."""

    def __init__(self, proc: asyncio.subprocess.Process, pid: int, started: int):
        self.proc, self.pid, self.started = proc, pid, started

    @classmethod
    async def start(cls, argv: list[str], wait_s: float = 10.0) -> _Anchor:
        proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and proc.returncode is None:
            for pid, started in descendants(proc.pid).items():
                if _comm(pid) == "sleep":
                    return cls(proc, pid, started)
            await asyncio.sleep(0.01)
        kill_quietly(proc.pid)
        assert proc.stderr is not None
        error = (await proc.stderr.read()).decode(errors="replace")
        await proc.wait()
        raise SandboxError(f"the local sandbox did not start: {error.strip()[-2000:] or 'bubblewrap gave no reason'}")

    def alive(self) -> bool:
        return (proc_stat(self.pid) or (0, -1))[1] == self.started

    async def stop(self) -> None:
        kill_quietly(self.proc.pid)
        await self.proc.wait()


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def _uid_processes(uid: int) -> dict[int, int]:
    """Every process running as `uid`, {pid: start ticks}."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid and (st := proc_stat(int(name))) is not None:
                    found[int(name)] = st[1]
            except OSError:
                pass
    return found


def _uid_pids(uid: int) -> list[int]:
    pids = []
    for pid in _uid_processes(uid):
        try:
            if _alive(str(pid)):
                pids.append(pid)
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
        self.nsenter = shutil.which("nsenter")
        if self.nsenter is None and os.geteuid() == 0:
            raise SandboxError("the local sandbox needs nsenter (util-linux) to open shells in a running sandbox: "
                               "run `apt-get install util-linux`")

    async def start(self, spec: SandboxSpec) -> LocalSandbox:
        root, disk = _make_root(spec.disk_mb)
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
        sealed = sealed_folders(spec, root)
        for path, folder in sealed.items():
            argv += ["--ro-bind", str(folder), path]
        argv += ["--remount-ro", "/", "--chdir", spec.workdir, "--clearenv"]
        for key, value in env.items():
            argv += ["--setenv", key, value]
        # a cgroup caps real memory use; without one, fall back to capping each process's address space
        cgroup = Cgroup.create(root.name, spec.memory_mb, spec.max_processes, spec.cpus) if uid is not None else None
        prelude = limits_prelude(None if cgroup else spec.memory_mb, spec.max_processes)
        shell = ["bash", "--noprofile", "--norc", "-c", prelude + DRIVER]
        enter = [] if cgroup is None else ["sh", "-c", f'{cgroup.enter_command()} && exec "$@"', "polar-sandbox"]
        limits = {"output_limit": spec.output_limit_bytes, "default_timeout": spec.command_timeout_s}
        anchor, session = None, None
        try:
            if uid is None:  # bubblewrap's own child is the shell
                session = ShellSession([*argv, *shell], **limits)
            else:  # an anchor holds the sandbox; each shell enters it from outside, as the sandbox's uid
                anchor = await _Anchor.start([*enter, *argv, "sleep", "infinity"])
                session = ShellSession([*enter, self.nsenter or "nsenter", f"--target={anchor.pid}", "--user",
                                        "--mount", "--pid", "--net", "--ipc", "--uts", "--cgroup", "--root", "--wd",
                                        f"--setuid={uid}", f"--setgid={uid}", "--", "setpriv", "--no-new-privs", "--",
                                        *shell], env=env, members=partial(_uid_processes, uid), **limits)
            await session.start()
        except BaseException:
            if session is not None:
                await session.close()
            if anchor is not None:
                await anchor.stop()
            if cgroup is not None:
                cgroup.remove()
            _remove_root(root, disk)
            raise
        sandbox = LocalSandbox(spec, session, root, uid, cgroup, disk, anchor)
        sandbox.sealed, sandbox.sealed_owner = sealed, uid
        await sandbox.mark_processes()
        return sandbox
