"""Agent harnesses by name. The built-in agent runs in-process; external CLIs come through the gateway."""

from __future__ import annotations

import importlib

from polar.errors import UnknownNameError
from polar.protocols import Harness

HARNESSES = {
    "builtin": "polar.harnesses.builtin:BuiltinHarness",
}


def make_harness(name: str) -> Harness:
    if name not in HARNESSES:
        raise UnknownNameError("harness", name, HARNESSES)
    module, attr = HARNESSES[name].split(":")
    return getattr(importlib.import_module(module), attr)()
