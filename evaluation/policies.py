"""Policies by name: `scripted`, `empty`, `oracle`, `openai` (any OpenAI-compatible server) and `local`.

A policy is any callable `(request, task) -> reply`. `scripted` and `oracle` are stateless: they pick the
reply by how many assistant turns the request already holds, so one object serves any number of episodes.
"""

from __future__ import annotations

import base64
import json
import posixpath
import re
import shlex
from collections.abc import Sequence
from typing import Any

from polar.errors import UnknownNameError
from polar.protocols import CallTool, Task, WriteFile
from polar.types import ModelReply, ModelRequest, ToolCall, content_text

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


# Shell tools by name, in order of preference; the argument is found from the tool's own schema.
_SHELL_NAMES = ("bash", "Bash", "run_shell_command", "exec_command", "shell", "shell_command", "run_command")
_FINISH_TOOLS = ("submit",)
# Harnesses without tool calling (mini-swe-agent) say in their prompt which command ends the episode.
_FINISH_COMMANDS = ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "echo MINI_SWE_AGENT_FINAL_OUTPUT")


def _shell_tool(request: ModelRequest) -> tuple[str, str, str] | None:
    """(tool name, argument name, argument type) of the request's shell tool, read from its schema."""
    found = {}
    for tool in request.tools:
        fn = tool.get("function", tool)
        props = (fn.get("parameters") or {}).get("properties") or {}
        for arg in ("command", "cmd"):
            if arg in props:
                found[fn.get("name")] = (fn.get("name"), arg, props[arg].get("type", "string"))
                break
    return next((found[n] for n in _SHELL_NAMES if n in found), None)


class OraclePolicy:
    """Replays the task's reference solution through the harness's own tools, then finishes.

    File writes and commands go through the harness's shell tool (found by name and schema in the
    request), so the harness itself executes them; a harness without tools gets fenced bash blocks.
    Files are written from base64, which every harness's command filter lets through. Calls to the env's own
    tools (a browser) go to the tool of that name, which an MCP client may have prefixed (`mcp__polar__click`);
    an element named by role and name is found in the latest page snapshot the request holds.
    """

    name = "oracle"
    model = None

    def __call__(self, request: ModelRequest, task: Task | None = None) -> ModelReply:
        if task is None:
            raise ValueError("the oracle policy needs the task: call it as policy(request, info['task'])")
        steps = task.reference_solution()
        if steps and isinstance(steps[0], CallTool) and steps[0].target:  # a target needs a snapshot to resolve
            steps = [CallTool("snapshot"), *steps]
        turn = assistant_turns(request)
        if turn < len(steps):
            step = steps[turn]
            if isinstance(step, CallTool):
                return _call_env_tool(request, step, turn)
            command = _write_command(step.path, step.content) if isinstance(step, WriteFile) else step.command
            return self._run(request, command, turn)
        finish = next((t for t in _FINISH_TOOLS if t in request.tool_names()), None)
        if finish:
            return ModelReply(tool_calls=[ToolCall(id=f"call_oracle_{turn}", name=finish)], finish_reason="tool_calls")
        prompt = "\n".join(str(m.get("content") or "") for m in request.messages if m.get("role") == "system")
        command = next((c for c in _FINISH_COMMANDS if c in prompt), None)
        if command:
            return self._run(request, command, turn)
        return ModelReply(content="done\nsubmit", finish_reason="stop")

    def _run(self, request: ModelRequest, command: str, turn: int) -> ModelReply:
        shell = _shell_tool(request)
        if shell is None:
            return ModelReply(content=f"```bash\n{command}\n```", finish_reason="stop")
        name, arg, kind = shell
        value: str | list[str] = ["bash", "-lc", command] if kind == "array" else command
        call = ToolCall(id=f"call_oracle_{turn}", name=name, arguments=json.dumps({arg: value}))
        return ModelReply(tool_calls=[call], finish_reason="tool_calls")


_MCP_TOOL_NAMES = ("mcp__polar__{}", "mcp_polar_{}", "polar_{}")
"""How MCP clients name an env tool of the server the adapters register as `polar`: Claude Code and Qwen Code
`mcp__polar__click`, Gemini CLI `mcp_polar_click`, opencode `polar_click`."""


def _call_env_tool(request: ModelRequest, step: CallTool, turn: int) -> ModelReply:
    names = {step.name, *(form.format(step.name) for form in _MCP_TOOL_NAMES)}
    name = next((n for n in request.tool_names() if n in names), None)
    if name is None:
        raise ValueError(f"the request offers no tool {step.name!r} (tools: {', '.join(request.tool_names())}); "
                         "the task needs a harness that can reach the env's tools")
    arguments = dict(step.arguments)
    if step.target:
        arguments["ref"] = _ref_in_latest_snapshot(request, step.target)
    call = ToolCall(id=f"call_oracle_{turn}", name=name, arguments=json.dumps(arguments))
    return ModelReply(tool_calls=[call], finish_reason="tool_calls")


def _ref_in_latest_snapshot(request: ModelRequest, target: dict[str, Any]) -> str:
    """The ref of the `nth` element with the target's role and exact name in the newest snapshot (a tool result
    holding refs); an element that is not there is the reference solution's bug, so it raises."""
    line = re.compile(rf'^\s*- {re.escape(target["role"])} "{re.escape(target["name"])}"(?: |:|$).*?\[ref=(\w+)\]',
                      re.MULTILINE)
    for message in reversed(request.messages):
        text = content_text(message.get("content"))
        if "[ref=" in text:
            refs = line.findall(text)
            nth = int(target.get("nth", 0))
            if nth < len(refs):
                return refs[nth]
            raise ValueError(f"the latest snapshot has no {target['role']} named {target['name']!r} (#{nth}):\n"
                             f"{text[:2000]}")
    raise ValueError("no page snapshot in the request to find an element in")


def _write_command(path: str, text: str) -> str:
    """A shell command that writes `text` to `path` exactly. Base64 keeps it free of quotes, `$(...)`,
    backticks and heredocs, which some harnesses' command filters refuse."""
    folder = posixpath.dirname(path)
    mkdir = f"mkdir -p {shlex.quote(folder)} && " if folder else ""
    return f"{mkdir}printf %s {base64.b64encode(text.encode()).decode()} | base64 -d > {shlex.quote(path)}"


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
