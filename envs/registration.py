"""The env registry: every `polar/*-v0` id, its family and description, in one table with one lookup.

`register_envs` (the `gymnasium.envs` entry point) registers the ids with Gymnasium; everything else that needs
a family by env id or by family name asks `env_family` or `family_class` here, so importing a family (and its
optional dependencies) happens only when it is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from polar.errors import TaskFormatError, UnknownNameError

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


PLAYED = ("polar/Code-v0", "polar/Terminal-v0", "polar/Web-v0")
"""The envs whose suites are admitted by playing them; tried in this order (SWE-v0's last) when `--env` is not given."""
SWE = "polar/SWE-v0"


def find_env(suite: str, env_id: str | None = None) -> tuple[str, list[Any]]:
    """The env a suite is for and its tasks, loaded once: `env_id`'s family's when given, else the first family
    whose loader takes it (SWE-v0's last: its loader also takes dataset names). When none does, the
    `TaskFormatError` lists each loader's own error. The tasks keep the loader's `rejected` (task folders that did
    not load, with their reasons: `polar.tasks.folders`)."""
    if env_id is not None:
        return env_id, _as_list(env_family(env_id)().load_tasks(suite))
    errors = []
    for candidate in (*PLAYED, SWE):
        try:
            return candidate, _as_list(env_family(candidate)().load_tasks(suite))
        except (UnknownNameError, TaskFormatError, OSError, ValueError, ImportError) as e:
            errors.append(f"  {candidate}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    raise TaskFormatError(f"no env family loads {suite!r}; each loader said:\n" + "\n".join(errors) +
                          "\nPass --env to pick one, or fix the task files it names.")


def _as_list(tasks: Sequence[Any]) -> list[Any]:
    return tasks if isinstance(tasks, list) else list(tasks)
