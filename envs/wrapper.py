"""`PolarWrapper`: Gymnasium's `Wrapper` with polar's asyncio API (`areset`/`astep`) forwarded as well.

Gymnasium's `Wrapper.step` calls `self.env.step`, so a stack of wrappers forwards the sync API layer by layer; its
`Wrapper` has no `areset`/`astep`, so without this base a wrapper either loses the asyncio API or reaches past the
layers beneath it (`self.env.unwrapped`), and every wrapper between them silently stops acting there. A polar wrapper
forwards to `self.env`, as `Wrapper.step` does, and overrides `astep` wherever it overrides `step`.

`async_env(env)` is the one way in for a caller of the asyncio API (`play_episode`, the trainers' rollout), whatever
is stacked. A plain Gymnasium wrapper (`gym.make`'s `OrderEnforcing` and `PassiveEnvChecker`) has only the sync API,
so the asyncio path passes beneath it to the next layer that has one. Every caller gets the episode the same way,
from the last step's `info["trace"]`, which each wrapper passes on.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from polar.types import ModelRequest


def async_env(env: gym.Env) -> gym.Env:
    """The outermost layer of `env` with the asyncio API: `env` itself when it has `areset`/`astep` (a `PolarEnv`, a
    `PolarWrapper`, a Ray `RemoteEnv`), else the first layer beneath the plain Gymnasium wrappers around one."""
    layer = env
    while not (hasattr(layer, "areset") and hasattr(layer, "astep")):
        if not isinstance(layer, gym.Wrapper):
            raise TypeError(f"{env} has no asyncio API (areset/astep): wrap a polar env (gym.make('polar/Code-v0')), "
                            "and subclass polar.envs.wrapper.PolarWrapper for a wrapper of your own")
        layer = layer.env
    return layer


class PolarWrapper(gym.Wrapper):
    """A Gymnasium wrapper of a polar env (or of a wrapper around one) whose `areset`/`astep` forward to the env it
    wraps, as `reset`/`step` do: a subclass overrides each pair alike, so both APIs act through it."""

    async def areset(self, *, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[ModelRequest, dict[str, Any]]:
        """Uses the `areset` of the wrapped env (through `async_env`)."""
        return await async_env(self.env).areset(seed=seed, options=options)

    async def astep(self, action: Any) -> tuple[ModelRequest, float, bool, bool, dict[str, Any]]:
        """Uses the `astep` of the wrapped env (through `async_env`)."""
        return await async_env(self.env).astep(action)
