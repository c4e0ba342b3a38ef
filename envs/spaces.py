"""Gymnasium spaces for model requests (observations) and model replies (actions).

They are not numeric, so they only check types; `sample()` gives a random plain-text reply or request,
which is all `check_env` and random-action baselines need.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from polar.types import ModelReply, ModelRequest

_WORDS = ("the", "file", "test", "run", "fix", "code", "value", "list", "return", "error", "check", "done")


class _TextSpace(gym.Space):
    def __init__(self, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def _text(self) -> str:
        n = int(self.np_random.integers(3, 12))
        return " ".join(_WORDS[int(i)] for i in self.np_random.integers(0, len(_WORDS), n))


class ModelRequestSpace(_TextSpace):
    def sample(self, mask: Any = None, probability: Any = None) -> ModelRequest:
        return ModelRequest(messages=[{"role": "user", "content": self._text()}])

    def contains(self, x: Any) -> bool:
        return isinstance(x, ModelRequest)

    def __repr__(self) -> str:
        return "ModelRequestSpace()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelRequestSpace)


class ModelReplySpace(_TextSpace):
    def sample(self, mask: Any = None, probability: Any = None) -> ModelReply:
        return ModelReply(content=self._text(), finish_reason="stop")

    def contains(self, x: Any) -> bool:
        return isinstance(x, ModelReply)

    def __repr__(self) -> str:
        return "ModelReplySpace()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelReplySpace)
