"""Sandbox backends by name. Each is one short file; the shell protocol they share is in `shell.py`."""

from __future__ import annotations

from polar.errors import UnknownNameError
from polar.protocols import SandboxBackend

BACKENDS = {
    "local": "polar.envs.sandbox.local:LocalBackend",
    "process": "polar.envs.sandbox.process:ProcessBackend",
    "docker": "polar.envs.sandbox.docker:DockerBackend",
}


def make_backend(name: str) -> SandboxBackend:
    """The backend called `name`; imported on demand so optional dependencies stay optional."""
    import importlib

    if name not in BACKENDS:
        raise UnknownNameError("sandbox", name, BACKENDS)
    module, attr = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module), attr)()
