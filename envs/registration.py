"""The env registry: every `polar/*-v0` id, its family and description, in one table with one lookup.

`register_envs` (the `gymnasium.envs` entry point) registers the ids with Gymnasium; everything else that needs
a family by env id or by family name asks `env_family` or `family_class` here, so importing a family (and its
optional dependencies) happens only when it is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from polar.errors import UnknownNameError

if TYPE_CHECKING:
    from polar.protocols import EnvFamily

FAMILIES: dict[str, str] = {
    "code": "polar.envs.code:CodeFamily",
    "swe": "polar.envs.swe:SweFamily",
    "terminal": "polar.envs.terminal.family:TerminalFamily",
    "web": "polar.envs.web:WebFamily",
}
"""Family name → the class implementing `polar.protocols.EnvFamily`."""

ENVS: dict[str, tuple[str, str]] = {
    "polar/Code-v0": ("code", "function-level Python tasks: edit a stub module, graded by hidden unit tests"),
    "polar/SWE-v0": ("swe", "fix an issue in a real repository (SWE-bench format), graded by swebench's own code"),
    "polar/Terminal-v0": ("terminal", "Harbor-format terminal tasks (Terminal-Bench 2.0 and others): test.sh grades"),
    "polar/Web-v0": ("web", "tasks on small web apps in a real Chromium, graded from the app's server-side state"),
}
"""Env id → (family name, one-line description)."""


def family_class(name: str) -> type[EnvFamily]:
    """The class of the env family `name` (`code`, `swe`, ...), imported only when asked for."""
    if name not in FAMILIES:
        raise UnknownNameError("env family", name, FAMILIES)
    module, attr = FAMILIES[name].split(":")
    return getattr(importlib.import_module(module), attr)


def load_family(name: str) -> EnvFamily:
    """A fresh instance of the env family `name`."""
    return family_class(name)()


def env_family(env_id: str) -> type[EnvFamily]:
    """The family class behind a registered env id (its reward spec needs no instance); UnknownNameError lists
    the ids."""
    if env_id not in ENVS:
        raise UnknownNameError("env id", env_id, ENVS)
    return family_class(ENVS[env_id][0])


def register_envs() -> None:
    from gymnasium.envs.registration import register, registry

    for env_id, (family, _) in ENVS.items():
        if env_id not in registry:
            register(id=env_id, entry_point="polar.envs.polar_env:PolarEnv", kwargs={"family": family})
