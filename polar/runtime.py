"""One background asyncio loop per process, where every sandbox, harness and gateway coroutine runs.

Sync callers (`env.step`) block on it; async callers (`await env.astep`) await it from their own loop. Keeping
one long-lived loop thread means subprocesses are always children of the same thread, so sandboxes started
with "die with parent" live exactly as long as the process.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="polar-runtime", daemon=True).start()
        return _loop


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` on the runtime loop and wait for it (from any thread but the loop's own)."""
    target = loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is target:
        coro.close()
        raise RuntimeError("polar.runtime.run() was called from the runtime loop; await the coroutine instead")
    future = asyncio.run_coroutine_threadsafe(coro, target)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


async def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Await `coro` on the runtime loop from any other event loop."""
    target = loop()
    if asyncio.get_running_loop() is target:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, target))
