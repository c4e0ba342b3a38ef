"""Policies by name: `scripted`, `empty`, `oracle`, `openai` (any OpenAI-compatible server) and `local`.

A policy is any callable `(request, task) -> reply`. `scripted` and `oracle` are stateless: they pick the
reply by how many assistant turns the request already holds, so one object serves any number of episodes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from polar.errors import UnknownNameError
from polar.protocols import RunCommand, Task, WriteFile
from polar.types import ModelReply, ModelRequest, ToolCall

POLICIES = ("scripted", "empty", "oracle", "openai", "local")


def assistant_turns(request: ModelRequest) -> int:
    return sum(1 for m in request.messages if m.get("role") == "assistant")


class ScriptedPolicy:
    """Replies from a fixed list, in order; after the list, an empty reply."""

    name = "scripted"
    model = None

    def __init__(self, replies: Sequence[ModelReply | dict | str]):
        self.replies = [ModelReply.coerce(r) for r in replies]

    def __call__(self, request: ModelRequest, task: Task | None = None) -> ModelReply:
        turn = assistant_turns(request)
        return self.replies[turn].model_copy(deep=True) if turn < len(self.replies) else ModelReply(content="")


# How each harness names its tools. The oracle speaks whichever of these the request offers.
_WRITE_TOOLS = {
    "create": lambda path, text: {"path": path, "file_text": text},
}
_SHELL_TOOLS = {"bash": "command"}
_FINISH_TOOLS = ("submit",)


class OraclePolicy:
    """Replays the task's reference solution through the harness's own tools, then finishes."""

    name = "oracle"
    model = None

    def __call__(self, request: ModelRequest, task: Task | None = None) -> ModelReply:
        if task is None:
            raise ValueError("the oracle policy needs the task: call it as policy(request, env.unwrapped.current_task)")
        steps = task.reference_solution()
        turn = assistant_turns(request)
        tools = set(request.tool_names())
        if turn < len(steps):
            return self._step(steps[turn], tools, turn)
        finish = next((t for t in _FINISH_TOOLS if t in tools), None)
        if finish:
            return ModelReply(tool_calls=[ToolCall(id=f"call_oracle_{turn}", name=finish)], finish_reason="tool_calls")
        return ModelReply(content="submit", finish_reason="stop")

    def _step(self, step: WriteFile | RunCommand, tools: set[str], turn: int) -> ModelReply:
        call_id = f"call_oracle_{turn}"
        if isinstance(step, WriteFile):
            write = next((t for t in _WRITE_TOOLS if t in tools), None)
            if write:
                args = _WRITE_TOOLS[write](step.path, step.content)
                return ModelReply(tool_calls=[ToolCall(id=call_id, name=write, arguments=json.dumps(args))],
                                  finish_reason="tool_calls")
            command = _heredoc(step.path, step.content)
        else:
            command = step.command
        shell = next((t for t in _SHELL_TOOLS if t in tools), None)
        if shell:
            args = {_SHELL_TOOLS[shell]: command}
            return ModelReply(tool_calls=[ToolCall(id=call_id, name=shell, arguments=json.dumps(args))],
                              finish_reason="tool_calls")
        return ModelReply(content=f"```bash\n{command}\n```", finish_reason="stop")


def _heredoc(path: str, text: str) -> str:
    marker = "POLAR_EOF"
    while marker in text:
        marker += "_"
    body = text if text.endswith("\n") else text + "\n"
    return f"mkdir -p \"$(dirname '{path}')\" && cat > '{path}' <<'{marker}'\n{body}{marker}"


def make_policy(name: str, **options: Any):
    """Build a policy by name. Options: `replies` (scripted), `model`/`base_url` (openai), local settings."""
    if name == "scripted":
        return ScriptedPolicy(options.get("replies") or [])
    if name == "empty":
        return ScriptedPolicy([])
    if name == "oracle":
        return OraclePolicy()
    if name == "openai":
        from polar.evaluation.openai_policy import OpenAIPolicy

        return OpenAIPolicy(**options)
    if name == "local":
        from polar.evaluation.local_policy import LocalPolicy

        return LocalPolicy(**options)
    raise UnknownNameError("policy", name, POLICIES)
