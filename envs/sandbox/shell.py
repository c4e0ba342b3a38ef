"""A persistent shell inside a sandbox, the one place that handles processes, timeouts and output limits, and
`ShellSandbox`, the exec/write/read/process-reset every backend shares on top of it.

Every backend starts the same small bash driver inside its isolation (bubblewrap, a container) and talks to
it over stdin/stdout. Each command is framed as `<nonce> <nbytes>\\n<command>`; the driver `eval`s it in
the same shell (so `cd` and variables persist, and builtins cost no fork) and ends its output with
`\\x1e<nonce> <exit code>\\n`. A round trip is a pipe write and a pipe read, not a new process tree.

A command that overruns its timeout or its output limit has its processes killed (those started since it
began, found through /proc), so background processes of earlier commands survive. If the shell itself is
stuck (a builtin loop) or exits, the session restarts it and says so in the output.

Files go through the sandbox's own shell rather than the host's file system, so a symlink the agent planted cannot
make polar read or write a host file, and every backend behaves the same. Before grading, `reset_processes` kills
what was started since `mark_processes` (the shell included) and opens a fresh shell.
"""

from __future__ import annotations

import asyncio
import base64
import os
import posixpath
import secrets
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from polar.errors import SandboxError
from polar.protocols import ExecResult, SandboxSpec

DRIVER = r"""
while IFS=' ' read -r __polar_nonce __polar_len; do
  LC_ALL=C IFS= read -r -N "$__polar_len" __polar_cmd
  __polar_moved=
  { eval "$__polar_cmd"; __polar_rc=$?; [ /dev/fd/1 -ef /dev/fd/2 ] || __polar_moved=1; } </dev/null 9>&1 1>&9 9>&- 2>&1
  [ -z "$__polar_moved" ] || printf '\n[polar: the command closed or redirected its stdout or stderr; both are back]\n'
  printf '\036%s %d\n' "$__polar_nonce" "$__polar_rc"
done
"""
"""The command runs in a group whose stdout and stderr are copies of the driver's (`9>&1 1>&9`, since bash skips a
bare `1>&1`), which bash puts back when the group ends: a command that closes or redirects them (`exec 1>&-`,
`exec >/dev/null`) loses its own output, not the driver's, so the end marker still arrives."""

_GRACE_S = 3.0
_SWEEPS = 200
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def limits_prelude(memory_mb: int | None, max_processes: int | None) -> str:
    """Shell lines that apply per-process limits to the driver and everything it starts."""
    lines = []
    if memory_mb:
        lines.append(f"ulimit -v {memory_mb * 1024}")
    if max_processes:
        lines.append(f"ulimit -u {max_processes}")
    return "\n".join(lines) + "\n"


def proc_stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks since boot), or None if the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    fields = raw[raw.rindex(b")") + 2 :].split()
    return int(fields[1]), int(fields[19])


def program(pid: int) -> tuple[str, bytes]:
    """What a process runs: the file (its /proc exe link) and its auxiliary vector, which the kernel writes at each
    execve and nothing else changes (a fresh random address in it at every exec, even of the same file); empty when
    unreadable or gone. A process may rename itself (`setproctitle`), not change these without an execve."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
        with open(f"/proc/{pid}/auxv", "rb") as f:
            return exe, f.read()
    except OSError:
        return "", b""


def command_args(pid: int) -> list[str] | None:
    """A process's command line as its arguments, None when it is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0")[:-1]]
    except OSError:
        return None


def command_line(pid: int) -> str:
    args = command_args(pid)
    return "?" if args is None else " ".join(args)


def descendants(root: int) -> dict[int, int]:
    """All live descendants of `root` as {pid: start time in ticks}."""
    table: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (st := proc_stat(int(name))) is not None:
            table[int(name)] = st
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, int] = {}
    stack = list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found[pid] = table[pid][1]
        stack.extend(children.get(pid, []))
    return found


def boot_ticks() -> int:
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * _CLOCK_TICKS)


def kill_quietly(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _state(pid: int) -> bytes:
    """The process's state letter (`R`, `S`, `T` stopped, `Z` a zombie, ...); `X` once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return b"X"


async def kill_processes(processes: Callable[[], dict[int, int]], keep: frozenset[tuple[int, int]],
                         wait_s: float = 10.0) -> None:
    """Kill every process `processes()` lists ({pid: start ticks}) that is not in `keep`, until none is left.
    Each is stopped first (SIGSTOP cannot be caught) and all are killed only once a scan finds every one stopped,
    so a fork bomb cannot outrun the sweep and a stopped process cannot be woken by one still running. A process in
    the kernel (`D`) counts as stopped: it runs no code of its own before it takes the pending SIGSTOP, and waiting
    for it could be forever (a vfork parent waits there on its child, stopped before its exec)."""
    deadline = time.monotonic() + wait_s
    while True:
        states = {pid: _state(pid) for pid, start in processes().items() if (pid, start) not in keep}
        victims = [pid for pid, state in states.items() if state not in (b"Z", b"X")]
        if not victims:
            return
        if time.monotonic() > deadline:
            left = ", ".join(f"{pid} ({states[pid].decode()})" for pid in victims[:20])
            raise SandboxError(f"processes of the sandbox survived SIGKILL for {wait_s:g}s: {left} (pid, state)")
        running = [pid for pid in victims if states[pid] not in (b"T", b"t")]
        for pid in running:
            kill_quietly(pid, signal.SIGSTOP)
        all_stopped = all(states[pid] == b"D" for pid in running)
        if all_stopped:
            for pid in victims:
                kill_quietly(pid)
        await asyncio.sleep(0.02 if all_stopped else 0.005)


@dataclass
class _Reading:
    """One command's output as it is read: kept apart from the read itself so that the read of a cancelled command
    can go on in the background from where it stopped (an end marker may be half read)."""

    proc: asyncio.subprocess.Process
    marker: bytes
    since: int  # when the command began, in boot ticks: what it started is what began later
    started: float
    limit: int
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    timed_out: bool = False
    truncated: bool = False
    stopped: bool = False


class ShellSession:
    """Runs commands one at a time through the driver started by `argv`."""

    def __init__(self, argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                 output_limit: int = 1 << 20, default_timeout: float = 120.0,
                 members: Callable[[], dict[int, int]] | None = None):
        self.argv, self.env, self.cwd = list(argv), env, cwd
        self.members = members  # every process of the sandbox, {pid: start ticks}, where the sandbox can list them
        self.output_limit, self.default_timeout = output_limit, default_timeout
        self.proc: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self._lock = asyncio.Lock()
        self._counter = 0
        self._infra: set[int] = set()
        self._draining: asyncio.Task | None = None  # a cancelled command's output being read to its end

    async def start(self) -> None:
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, env=self.env, cwd=self.cwd,
            )
        except OSError as e:
            raise SandboxError(f"could not start the sandbox shell {self.argv[0]!r}: {e}") from e
        probe = await self._run("echo ready", timeout=30.0)
        if probe.exit_code != 0 or probe.output.strip() != "ready":
            await self.close()
            raise SandboxError(f"the sandbox shell did not start: {probe.output.strip()[-2000:]}")
        self._infra = set(descendants(self.proc.pid))  # the driver and any wrapper between: never a command's

    async def run(self, command: str, timeout: float | None = None, output_limit: int | None = None) -> ExecResult:
        """Run one command, in the caller's task (no task or shield of its own: a round trip is a pipe write and a
        pipe read). If the caller is cancelled, the command is killed and the protocol read to its end in the
        background, which the next command waits for, so it starts cleanly."""
        if "\0" in command:  # bash drops NUL bytes, so the driver would wait for bytes that never come
            return ExecResult("[polar: the command contains a NUL byte, which no shell command can hold; nothing ran. "
                              "Write binary data with printf escapes or base64 instead]", 2)
        async with self._lock:
            if self._draining is not None:  # forgotten only once it ended: this wait may be cancelled too
                await asyncio.wait([self._draining])  # it ends by itself, within the grace period
                self._draining = None
            note = ""
            if self.proc is None or self.proc.returncode is not None:
                await self._restart()
                note = "[polar: the previous shell had exited; this command ran in a new one]\n"
            result = await self._run(command, timeout or self.default_timeout, output_limit)
            if note:
                result = ExecResult(note + result.output, result.exit_code, result.timed_out,
                                    result.truncated, result.duration_s)
            return result

    async def _restart(self) -> None:
        await self.close()
        self.restarts += 1
        await self.start()

    async def _run(self, command: str, timeout: float, output_limit: int | None = None) -> ExecResult:
        assert self.proc is not None and self.proc.stdin is not None
        self._counter += 1
        nonce = f"{secrets.token_hex(6)}{self._counter}".encode()
        body = command.encode("utf-8", errors="surrogateescape")
        started, since = time.monotonic(), boot_ticks()
        reading = _Reading(self.proc, b"\x1e" + nonce + b" ", since, started, output_limit or self.output_limit)
        try:
            try:
                self.proc.stdin.write(nonce + b" %d\n" % len(body) + body)  # whole in the pipe's buffer, even if
                await self.proc.stdin.drain()  # the wait for it to leave is cancelled
            except (BrokenPipeError, ConnectionResetError):
                return ExecResult("[polar: the sandbox shell is gone]", -1, duration_s=0.0)
            return await self._read(reading, timeout)
        except asyncio.CancelledError:
            self._stop_command(since)
            reading.stopped = True
            self._draining = asyncio.ensure_future(self._drain(reading))
            raise

    async def _drain(self, reading: _Reading) -> None:
        """Read a cancelled command's output to its end marker, or restart the shell after the grace period."""
        try:
            await self._read(reading, _GRACE_S)
        except Exception:  # noqa: BLE001 - a shell that broke meanwhile: the next command finds it gone and restarts it
            await self._kill_shell()

    async def _read(self, reading: _Reading, timeout: float) -> ExecResult:
        """Read until the end marker; stop the command at its timeout or output limit, and restart the shell if
        it does not stop within the grace period."""
        proc, marker, limit, since = reading.proc, reading.marker, reading.limit, reading.since
        assert proc.stdout is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        head, tail = reading.head, reading.tail
        exit_code: int | None = None
        while True:
            idx = tail.find(marker)
            if idx >= 0 and (nl := tail.find(b"\n", idx)) >= 0:
                exit_code = int(tail[idx + len(marker) : nl] or b"-1")
                head += tail[:idx]
                break
            keep = len(marker) + 24
            if len(tail) > keep:
                head += tail[:-keep]
                del tail[:-keep]
            if len(head) > limit:
                del head[limit:]
                if not reading.truncated:
                    reading.truncated = True
                    self._stop_command(since)
                    deadline = min(deadline, loop.time() + _GRACE_S)
            try:
                async with asyncio.timeout_at(deadline):  # no task per read, unlike wait_for
                    chunk = await proc.stdout.read(1 << 16)
            except TimeoutError:
                if reading.stopped or reading.timed_out or reading.truncated:
                    await self._kill_shell()
                    head += tail
                    return self._result(head, limit, "[polar: the command did not stop; the shell was restarted: "
                                        "its working directory, variables and background processes are gone]",
                                        -9, reading.timed_out, reading.truncated, reading.started)
                reading.timed_out = reading.stopped = True
                self._stop_command(since)
                deadline = loop.time() + _GRACE_S
                continue
            if not chunk:  # the shell exited (`exit`, `exec`, a crash)
                code = await proc.wait()
                head += tail
                return self._result(head, limit, "[polar: the shell exited; the next command starts a new one]",
                                    code, reading.timed_out, reading.truncated, reading.started)
            tail += chunk
        if reading.stopped or reading.truncated:  # ended: what a fork under way during the sweep started only later
            self._stop_command(since)  # (a loaded machine left a double-forked sleeper of a fork bomb's run alive)
        note = f"[polar: command timed out after {timeout:g}s and was killed]" if reading.timed_out else ""
        return self._result(head, limit, note, exit_code, reading.timed_out, reading.truncated, reading.started)

    def _result(self, out: bytearray, limit: int, note: str, code: int, timed_out: bool, truncated: bool,
                started: float) -> ExecResult:
        if len(out) > limit:
            del out[limit:]
            truncated = True
        text = out.decode("utf-8", errors="replace")
        if truncated:
            note = (note + " " if note else "") + f"[polar: output truncated at {limit} bytes; the command was stopped]"
        if note:
            text = text + ("\n" if text and not text.endswith("\n") else "") + note
        return ExecResult(text, code, timed_out, truncated, time.monotonic() - started)

    def command_pids(self, since_ticks: int) -> list[int]:
        """Processes the current command started: the sandbox's processes born after it began (a daemon that forked
        twice has left the driver's tree for the sandbox's init), or without `members` the driver's descendants."""
        if self.proc is None:
            return []
        found = self.members() if self.members else descendants(self.proc.pid)
        own = self.own_pids()
        return [pid for pid, start in found.items() if start >= since_ticks and pid not in own]

    def _stop_command(self, since_ticks: int) -> None:
        """Kill what the command started; a fork bomb forks while it is swept, so sweep again while new ones appear,
        and once more after a moment: a fork under way when its parent was killed can show its child only then (a
        loaded machine left `bash -c 'sleep 100 & ...'`'s sleeps running)."""
        killed: set[int] = set()
        settled = False
        for _ in range(_SWEEPS):
            if not (found := set(self.command_pids(since_ticks)) - killed):
                if settled or not killed:
                    return
                settled = True
                time.sleep(0.02)
                continue
            settled = False
            for pid in found:
                kill_quietly(pid)
            killed |= found

    async def _kill_shell(self) -> None:
        """Kill what runs under the shell's wrapper, let the wrapper reap it and exit, then kill it too."""
        if self.proc is not None and self.proc.returncode is None:
            for pid in descendants(self.proc.pid):
                kill_quietly(pid)
            if self.proc.stdin is not None:
                self.proc.stdin.close()  # a driver still reading its input ends at EOF
            try:
                await asyncio.wait_for(self.proc.wait(), 1.0)
            except TimeoutError:
                kill_quietly(self.proc.pid)
                await self.proc.wait()

    def own_pids(self) -> set[int]:
        """The shell's own processes (the driver and any wrapper), never a command's."""
        return set() if self.proc is None else {self.proc.pid, *self._infra}

    def fresh(self) -> ShellSession:
        """A new, unstarted session started the same way: a new shell with the spec's clean environment."""
        return ShellSession(self.argv, env=self.env, cwd=self.cwd, output_limit=self.output_limit,
                            default_timeout=self.default_timeout, members=self.members)

    async def release(self) -> None:
        """Let go of a shell whose processes the sandbox has already killed: close its pipes and reap its client,
        without touching what it started (the task's services, which the sandbox keeps)."""
        if self.proc is None:
            return
        # The client outside (nsenter, `docker exec`) stopped itself when the reset stopped its shell (nsenter passes
        # job control on). Woken, it reaps the dead shell and exits; killed at once, it would leave that shell to the
        # host's init, and the sandbox's pid namespace could not end until the host reaped it.
        kill_quietly(self.proc.pid, signal.SIGCONT)
        try:
            await asyncio.wait_for(self.proc.wait(), 1.0)
        except TimeoutError:
            kill_quietly(self.proc.pid)
            await self.proc.wait()
        await self._drained()
        self.proc = None

    async def close(self) -> None:
        if self.proc is None:
            return
        await self._kill_shell()
        await self._drained()
        self.proc = None

    async def _drained(self) -> None:
        """Once the shell is gone, the read of a cancelled command's output ends at its EOF: wait for it, so that
        no task outlives the session."""
        if self._draining is not None:
            await asyncio.wait([self._draining], timeout=_GRACE_S)
            self._draining = None


# --- the sandbox on top of a session ---------------------------------------------------------------------

_FILE_LIMIT = 64 << 20


class ShellSandbox:
    """A sandbox whose commands run in `session`; backends add how the session is started and stopped."""

    backend = "shell"

    def __init__(self, spec: SandboxSpec, session: ShellSession):
        self.spec, self.session = spec, session
        self.stopped = False
        self._marked: frozenset[tuple[int, int]] = frozenset()
        """Processes that survive `reset_processes`: those `mark_processes` found. Backends mark once when they
        start (the container's init, the sandbox's anchor), the env again after the task's setup."""
        self._programs: dict[tuple[int, int], tuple[tuple[str, bytes], str]] = {}
        """What each marked process ran when it was marked (`program`), and its command line then."""
        self.sealed: dict[str, Path] = {}
        """{sandbox path: host folder} of the spec's `sealed_dirs`, which the backend binds read-only."""
        self.sealed_owner: int | None = None
        """The uid the sealed dirs' files are given (the local sandbox's own uid, where polar runs as root), so that
        they belong to the user the sandbox's commands run as, as Harbor's /tests belongs to its container's root."""

    def _path(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.spec.workdir, path))

    async def exec(self, command: str, timeout: float | None = None) -> ExecResult:
        if self.stopped:
            raise SandboxError("this sandbox was stopped; start a new one (env.reset() does)")
        return await self.session.run(command, timeout)

    async def write(self, path: str, data: bytes | str) -> None:
        raw = data.encode() if isinstance(data, str) else data
        target = shlex.quote(self._path(path))
        encoded = base64.b64encode(raw).decode()
        result = await self.exec(
            f"mkdir -p \"$(dirname {target})\" && printf %s '{encoded}' | base64 -d > {target}", timeout=60
        )
        if result.exit_code != 0:
            raise SandboxError(f"could not write {path}: {result.output.strip()}")

    async def read(self, path: str) -> bytes:
        target = shlex.quote(self._path(path))
        result = await self.session.run(
            f"test -f {target} || (exit 3) && base64 -w0 < {target}",
            timeout=60, output_limit=_FILE_LIMIT,
        )
        if result.exit_code == 3:
            raise FileNotFoundError(path)
        if result.exit_code != 0 or result.truncated:
            raise SandboxError(f"could not read {path}: {result.output.strip()[:500]}")
        try:
            return base64.b64decode(result.output, validate=True)
        except ValueError as e:  # something else wrote to the shell's output (a process a command left behind)
            raise SandboxError(f"could not read {path}: its bytes came back mixed with other output ({e})") from e

    async def fill_sealed(self, path: str, files: dict[str, bytes]) -> None:
        """Make the sealed dir `path` hold exactly `files` ({relative name: bytes}, written executable), from
        outside the sandbox: its commands see them at once and can change none."""
        if (folder := self.sealed.get(path)) is None:
            raise SandboxError(f"{path} is not a sealed dir of this sandbox (sealed: {', '.join(self.sealed) or 'none'}"
                               f"; the {self.backend} backend seals what SandboxSpec.sealed_dirs names)")
        await asyncio.to_thread(_refill, folder, files, self.sealed_owner)

    async def chmod_sealed(self, path: str, args: list[str]) -> str | None:
        """Run the host's `chmod` with `args` (options, `--`, a mode, then paths relative to the sealed dir `path`)
        on the sealed dir's folder, from outside: a mode the sandbox's own chmod cannot set through the read-only
        bind. None when it was set, else chmod's complaint."""
        folder = self.sealed[path]
        split = args.index("--")
        files = [folder / name for name in args[split + 2:]]
        if not files or any(f != folder and folder.resolve() not in f.resolve().parents for f in files):
            raise SandboxError(f"chmod {' '.join(args)}: a path outside the sealed dir {path}")
        done = await asyncio.to_thread(subprocess.run, ["chmod", *args[:split + 2], *map(str, files)],
                                       capture_output=True, text=True, timeout=60)
        return None if done.returncode == 0 else (done.stderr or done.stdout).strip().replace(str(folder), path)

    def processes(self) -> dict[int, int]:
        """Every live process of the sandbox, {host pid: start ticks}. Here: the shell and its descendants, which
        misses a daemon that left the tree; backends that isolate find them all and override this."""
        if self.session.proc is None:
            return {}
        found = descendants(self.session.proc.pid)
        if (own := proc_stat(self.session.proc.pid)) is not None:
            found[self.session.proc.pid] = own[1]
        return found

    async def mark_processes(self) -> None:
        self._marked = frozenset((pid, start) for pid, start in self.processes().items()
                                 if pid not in self.session.own_pids())
        self._programs = {key: (program(key[0]), command_line(key[0])) for key in self._marked}

    def changed_programs(self) -> list[str]:
        """Marked processes, still alive under the same pid and start time, that have run an execve since: what
        survives `reset_processes` was made to run the agent's code (ptrace, then execve in its place)."""
        changed = []
        for (pid, start), (was, was_run) in sorted(self._programs.items()):
            if (now := program(pid)) != was and (proc_stat(pid) or (0, None))[1] == start:
                changed.append(f"process {pid}, kept across resets, ran `{was_run}` and has since run an execve "
                               f"(`{command_line(pid)}`, {now[0] or '?'})")
        return changed

    async def reset_processes(self) -> None:
        if self.stopped:
            raise SandboxError("this sandbox was stopped; start a new one (env.reset() does)")
        await kill_processes(self.processes, self._marked)
        await self.session.release()
        self.session = self.session.fresh()
        await self.session.start()

    async def stop(self) -> None:
        self.stopped = True
        await self.session.close()


def sealed_folders(spec: SandboxSpec, parent: Path) -> dict[str, Path]:
    """A fresh, empty host folder under `parent` for each of the spec's sealed dirs, readable by any user (the image's
    USER, the local sandbox's uid) and writable by polar alone."""
    folders = {}
    for i, path in enumerate(spec.sealed_dirs):
        folders[path] = parent / f"sealed{i}"
        folders[path].mkdir(mode=0o755)
        folders[path].chmod(0o755)  # whatever the umask
    return folders


def _refill(folder: Path, files: dict[str, bytes], owner: int | None = None) -> None:
    folder.chmod(0o755)  # what a chmod_sealed of the last grading set, undone
    for parent, dirs, _ in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(parent, name), 0o755)
    for child in folder.iterdir():
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    for name, data in files.items():
        target = folder / name
        if folder.resolve() not in target.resolve().parents:
            raise SandboxError(f"{name!r} is not a path inside the sealed dir")
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o755)
    if owner is not None:
        for parent, dirs, names in os.walk(folder):
            for path in (parent, *(os.path.join(parent, n) for n in dirs + names)):
                os.chown(path, owner, owner)
