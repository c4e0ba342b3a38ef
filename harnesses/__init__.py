"""Agent harnesses by name. The built-in agent runs in-process; external CLIs reach it through the gateway."""

from __future__ import annotations

import importlib
from functools import cache

from polar.errors import UnknownNameError
from polar.harnesses.declaration import Declaration
from polar.protocols import Harness

HARNESSES = {
    "builtin": "polar.harnesses.builtin:BuiltinHarness",
    "answer": "polar.harnesses.answer:AnswerHarness",
    "claude-code": "polar.harnesses.claude_code:ClaudeCode",
    "codex": "polar.harnesses.codex:Codex",
    "gemini-cli": "polar.harnesses.gemini_cli:GeminiCli",
    "qwen-code": "polar.harnesses.qwen_code:QwenCode",
    "opencode": "polar.harnesses.opencode:Opencode",
    "pi": "polar.harnesses.pi:Pi",
    "mini-swe-agent": "polar.harnesses.mini_swe_agent:MiniSweAgent",
    "terminus-2": "polar.harnesses.terminus2:Terminus2",
    "openhands": "polar.harnesses.openhands:OpenHands",
    "aider": "polar.harnesses.aider:Aider",
    "copilot": "polar.harnesses.copilot:Copilot",
    "droid": "polar.harnesses.droid:Droid",
    "cline": "polar.harnesses.cline:Cline",
}


IN_PROCESS = ("builtin", "answer")
"""The harnesses polar runs itself, in the env's process: no install, no gateway, no row in the CLI matrix."""
EXTERNAL = [name for name in HARNESSES if name not in IN_PROCESS]


def harness_class(name: str) -> type:
    if name not in HARNESSES:
        raise UnknownNameError("harness", name, HARNESSES)
    module, attr = HARNESSES[name].split(":")
    return getattr(importlib.import_module(module), attr)


def make_harness(name: str) -> Harness:
    return harness_class(name)()


@cache
def declarations() -> dict[str, Declaration]:
    """Every registered harness's declaration (its API and tools), by name: what the oracle policy and the tests
    know about harnesses, read from the adapters."""
    return {name: harness_class(name).declared for name in HARNESSES}
