"""Every `polar/*-v0` id, registered with Gymnasium. Called by the `gymnasium.envs` entry point."""

from __future__ import annotations

ENVS: dict[str, tuple[str, str]] = {
    "polar/Code-v0": ("code", "function-level Python tasks: edit a stub module, graded by hidden unit tests"),
    "polar/SWE-v0": ("swe", "fix an issue in a real repository (SWE-bench format), graded by swebench's own code"),
    "polar/Terminal-v0": ("terminal", "Harbor-format terminal tasks (Terminal-Bench 2.0 and others): test.sh grades"),
    "polar/Web-v0": ("web", "tasks on small web apps in a real Chromium, graded from the app's server-side state"),
}


def register_envs() -> None:
    from gymnasium.envs.registration import register, registry

    for env_id, (family, _) in ENVS.items():
        if env_id not in registry:
            register(id=env_id, entry_point="polar.envs.polar_env:PolarEnv", kwargs={"family": family})
