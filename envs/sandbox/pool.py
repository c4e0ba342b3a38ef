"""A pool that keeps sandboxes started ahead of need, so `reset` (and grading) need not wait for a start.

It wraps any backend. For each spec asked for, it keeps `size` sandboxes starting in the background; a
`start` takes one of them (waiting only if it is still starting) and orders a replacement.
"""

from __future__ import annotations

import asyncio
import contextlib

from polar.protocols import Sandbox, SandboxBackend, SandboxSpec


class PooledBackend:
    def __init__(self, backend: SandboxBackend, size: int = 1):
        self.backend, self.size = backend, size
        self.name = backend.name
        self._ready: dict[str, list[asyncio.Task[Sandbox]]] = {}

    async def start(self, spec: SandboxSpec) -> Sandbox:
        key = repr(spec)
        queue = self._ready.setdefault(key, [])
        while len(queue) < self.size + 1:
            queue.append(asyncio.ensure_future(self.backend.start(spec)))
        return await queue.pop(0)

    async def close(self) -> None:
        """Stop every sandbox started ahead that was never handed out."""
        for queue in self._ready.values():
            for task in queue:
                if not task.done():
                    task.cancel()
                with contextlib.suppress(BaseException):
                    await (await task).stop()
        self._ready.clear()
