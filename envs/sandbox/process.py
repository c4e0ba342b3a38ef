"""The unisolated `process` backend: the same shell, run directly on the host. Only when asked for by name.

It exists for machines without bubblewrap or Docker (and for debugging); it contains nothing, so it warns.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path

from polar.envs.sandbox.shell import DRIVER, ShellSandbox, ShellSession, limits_prelude
from polar.protocols import SandboxSpec
from polar.scratch import scratch_root


class ProcessSandbox(ShellSandbox):
    backend = "process"

    def __init__(self, spec: SandboxSpec, session: ShellSession, root: Path):
        super().__init__(spec, session)
        self.root = root

    def _path(self, path: str) -> str:
        return str(self.root / path) if not path.startswith("/") else path

    async def stop(self) -> None:
        if not self.stopped:
            await super().stop()
            shutil.rmtree(self.root, ignore_errors=True)


class ProcessBackend:
    name = "process"

    async def start(self, spec: SandboxSpec) -> ProcessSandbox:
        warnings.warn("sandbox='process' runs agent commands on the host with no isolation", stacklevel=2)
        root = Path(tempfile.mkdtemp(prefix="polar-proc-", dir=scratch_root()))
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8", "TERM": "dumb",
               "PAGER": "cat", "GIT_PAGER": "cat", **spec.env}
        argv = ["bash", "--noprofile", "--norc", "-c", limits_prelude(spec.memory_mb, None) + DRIVER]
        session = ShellSession(argv, env=env, cwd=str(root), output_limit=spec.output_limit_bytes,
                               default_timeout=spec.command_timeout_s)
        await session.start()
        return ProcessSandbox(spec, session, root)
