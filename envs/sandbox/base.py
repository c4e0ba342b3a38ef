"""`ShellSandbox`: exec, write and read for every backend, on top of a persistent `ShellSession`.

Files go through the sandbox's own shell rather than the host's file system, so a symlink the agent
planted cannot make polar read or write a host file, and every backend behaves the same. Before grading,
`reset_processes` kills what was started since `mark_processes` (the shell included) and opens a fresh shell.
"""

from __future__ import annotations

import base64
import posixpath
import shlex

from polar.envs.sandbox.shell import ShellSession, descendants, kill_processes, proc_stat
from polar.errors import SandboxError
from polar.protocols import ExecResult, SandboxSpec

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
        return base64.b64decode(result.output)

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
