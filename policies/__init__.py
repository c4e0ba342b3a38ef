"""Policies by name: `scripted`, `empty`, `oracle`, `openai` (any OpenAI-compatible server), `vllm` (a vLLM server,
token-in/token-out) and `local`.

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

from polar.errors import PolarError, UnknownNameError
from polar.harnesses.declaration import Declaration, ShellTool
from polar.protocols import CallTool, Task, WriteFile
from polar.types import ModelReply, ModelRequest, ToolCall, content_text

POLICIES = ("scripted", "empty", "oracle", "openai", "vllm", "local")


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


def _declarations() -> list[Declaration]:
    """What the harness adapters declare about their tools: the oracle recognises a request's shell, finish and
    env tools by them, whichever harness sent it."""
    from polar.harnesses import declarations  # the registry imports every adapter: only when an oracle runs

    return list(declarations().values())


def _shell_tool(request: ModelRequest) -> ShellTool | None:
    """The request's shell tool: the first declared shell tool the request offers with the declared argument."""
    offered = {}
    for tool in request.tools:
        fn = tool.get("function", tool)
        offered[fn.get("name")] = (fn.get("parameters") or {}).get("properties") or {}
    shells = (shell for declared in _declarations() for shell in declared.shell)
    return next((shell for shell in shells if shell.argument in offered.get(shell.name, {})), None)


COMMAND_BYTES = 48_000
"""The longest shell command the oracle sends in one turn: well under the 128 kB a single argument may hold
(`bash -lc CMD`), so consecutive file writes and commands share a turn until they reach it."""


def _turns(steps: Sequence[Any]) -> list[str | CallTool]:
    """The reference solution as turns: consecutive shell steps (file writes, commands) share one command, a line
    each, as a script runs them, up to `COMMAND_BYTES`, so a task with seven solution files takes one turn, not
    seven; an env tool call (a browser action) is a turn of its own."""
    turns: list[str | CallTool] = []
    for step in steps:
        if isinstance(step, CallTool):
            turns.append(step)
            continue
        command = _write_command(step.path, step.content) if isinstance(step, WriteFile) else step.command
        last = turns[-1] if turns else None
        if isinstance(last, str) and len(last) + 1 + len(command) <= COMMAND_BYTES:
            turns[-1] = f"{last}\n{command}"
        else:
            turns.append(command)
    return turns


class OraclePolicy:
    """Replays the task's reference solution through the harness's own tools, then finishes.

    File writes and commands go through the harness's shell tool (the one its adapter declares, found in the
    request), so the harness itself executes them; a harness without tools gets fenced bash blocks, or the reply
    format its adapter declares (aider's whole-file listings, Terminus-2's JSON).
    Consecutive writes and commands share one turn (`_turns`), so the oracle fits any turn budget a real solution
    fits. Files are written from base64, which every harness's command filter lets through. Calls to the env's own
    tools (a browser) go to the tool of that name as the adapter declares it (`mcp__polar__click` over MCP);
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
        reply_format = _reply_format(request)
        whole_reply = WHOLE_REPLIES.get(reply_format or "")
        if whole_reply is not None:  # the whole solution in one reply, however many turns the request shows
            return whole_reply(steps)
        turns = _turns(steps)
        turn = assistant_turns(request)
        text_reply = TEXT_REPLIES.get(reply_format or "")
        if text_reply is not None:  # a harness that reads its actions from the reply's text
            return text_reply(turns[turn] if turn < len(turns) else None)
        if turn < len(turns):
            step = turns[turn]
            if isinstance(step, CallTool):
                return _call_env_tool(request, step, turn)
            return self._run(request, step, turn)
        finish = next((d.finish_tool for d in _declarations() if d.finish_tool in request.tool_names()), None)
        if finish:
            arguments = json.dumps(_required_text(request, finish))
            call = ToolCall(id=f"call_oracle_{turn}", name=finish, arguments=arguments)
            return ModelReply(tool_calls=[call], finish_reason="tool_calls")
        prompt = "\n".join(str(m.get("content") or "") for m in request.messages if m.get("role") == "system")
        command = next((d.finish_command for d in _declarations() if d.finish_command and d.finish_command in prompt),
                       None)
        if command:
            return self._run(request, command, turn)
        return ModelReply(content="done\nsubmit", finish_reason="stop")

    def _run(self, request: ModelRequest, command: str, turn: int) -> ModelReply:
        shell = _shell_tool(request)
        if shell is None:
            return ModelReply(content=f"```bash\n{command}\n```", finish_reason="stop")
        if shell.one_line and "\n" in command:
            command = f"printf %s {base64.b64encode(command.encode()).decode()} | base64 -d | bash"
        value = {"string": command, "argv": ["bash", "-lc", command], "list": [command]}[shell.form]
        arguments = {**dict(shell.required), shell.argument: value}
        call = ToolCall(id=f"call_oracle_{turn}", name=shell.name, arguments=json.dumps(arguments))
        return ModelReply(tool_calls=[call], finish_reason="tool_calls")


def _required_text(request: ModelRequest, name: str) -> dict[str, str]:
    """"done" for each required string argument of the offered tool `name` (OpenHands' `finish` needs a `message`)."""
    for tool in request.tools:
        fn = tool.get("function", tool)
        if fn.get("name") == name:
            schema = fn.get("parameters") or {}
            properties = schema.get("properties") or {}
            required = schema.get("required") or ()
            return {key: "done" for key in required if properties.get(key, {}).get("type") == "string"}
    return {}


def _reply_format(request: ModelRequest) -> str | None:
    """The declared reply format of the harness whose own prompt (its `prompt_marker`) the request's system or first
    message holds; None for harnesses that act through tool calls."""
    prompt = "\n".join(content_text(m.get("content")) for i, m in enumerate(request.messages)
                       if i == 0 or m.get("role") == "system")
    return next((d.reply_format for d in _declarations() if d.prompt_marker and d.prompt_marker in prompt), None)


def _whole_files(steps: Sequence[Any]) -> ModelReply:
    """Every file of the reference solution in one reply, as aider's whole-file listings (path line, fenced content).
    Stateless: aider's requests hold its own example and "Ok." turns, so assistant turns do not count replies; aider
    ends after one message, and a repeated call gets the same files again."""
    listings = []
    for step in steps:
        if not isinstance(step, WriteFile):
            raise ValueError(f"aider writes files from the reply but runs no commands, so it cannot take the step "
                             f"{step!r}; use a harness with a shell tool for this task")
        text = step.content if step.content.endswith("\n") else f"{step.content}\n"
        if any(line.startswith("```") for line in text.splitlines()):
            raise ValueError(f"{step.path} has a line starting with ```, which would end aider's file listing early")
        listings.append(f"{step.path}\n```\n{text}```")
    return ModelReply(content="\n\n".join(listings), finish_reason="stop")


def _code_block(steps: Sequence[Any]) -> ModelReply:
    """The answer harness's reply: the one solution file in one ```python block (the harness writes the block over
    the task's one file)."""
    files = [step for step in steps if isinstance(step, WriteFile)]
    if len(files) != 1 or len(steps) != 1:
        raise ValueError(f"the answer harness takes one file in one code block, and this solution has {len(steps)} "
                         f"steps ({len(files)} file writes); use a harness with a shell tool for this task")
    text = files[0].content if files[0].content.endswith("\n") else f"{files[0].content}\n"
    if any(line.lstrip().startswith("```") for line in text.splitlines()):
        raise ValueError(f"{files[0].path} has a line starting with ```, which would end the code block early")
    return ModelReply(content=f"```python\n{text}```", finish_reason="stop")


WHOLE_REPLIES = {"aider-whole": _whole_files, "code-block": _code_block}
"""The oracle's one reply holding the whole reference solution, in each `Declaration.reply_format` that takes it so."""


def _terminus_json(step: str | CallTool | None) -> ModelReply:
    """Terminus-2's reply: the turn's command typed as keystrokes, or (`None`: the solution is done) `task_complete`,
    which it asks to confirm, so the same reply comes twice."""
    if isinstance(step, CallTool):
        raise ValueError("Terminus-2 cannot reach the env's tools (a browser): it has no MCP support")
    commands = [] if step is None else [{"keystrokes": f"{step}\n", "duration": 3.0}]
    reply = {"analysis": "", "plan": "", "commands": commands, "task_complete": step is None}
    return ModelReply(content=json.dumps(reply), finish_reason="stop")


TEXT_REPLIES = {"terminus-json": _terminus_json}
"""The oracle's reply for one turn (the turn's command or env tool call; None once the solution is done) in each
`Declaration.reply_format` it speaks."""


def _call_env_tool(request: ModelRequest, step: CallTool, turn: int) -> ModelReply:
    names = {d.env_tool(step.name) for d in _declarations()}  # `click`, `mcp__polar__click`, ... as each declares
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
        text = _unwrapped(content_text(message.get("content")))
        if "[ref=" in text:
            refs = line.findall(text)
            nth = int(target.get("nth", 0))
            if nth < len(refs):
                return refs[nth]
            raise ValueError(f"the latest snapshot has no {target['role']} named {target['name']!r} (#{nth}):\n"
                             f"{text[:2000]}")
    raise ValueError("no page snapshot in the request to find an element in")


def _unwrapped(text: str) -> str:
    """A tool result as the model reads it: the text parts of an MCP result a harness passes on as raw JSON (cline:
    `{"content": [{"type": "text", "text": ...}]}`, its newlines and quotes escaped), else the text itself."""
    if not text.lstrip().startswith(("{", "[")):
        return text
    try:
        found = json.loads(text)
    except ValueError:
        return text
    parts: list[str] = []

    def strings(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                strings(item)
        elif isinstance(value, list):
            for item in value:
                strings(item)

    strings(found)
    return "\n".join(parts)


def _write_command(path: str, text: str) -> str:
    """A shell command that writes `text` to `path` exactly. Base64 keeps it free of quotes, `$(...)`,
    backticks and heredocs, which some harnesses' command filters refuse."""
    folder = posixpath.dirname(path)
    mkdir = f"mkdir -p {shlex.quote(folder)} && " if folder else ""
    return f"{mkdir}printf %s {base64.b64encode(text.encode()).decode()} | base64 -d > {shlex.quote(path)}"


def make_policy(name: str, **options: Any):
    """Build a policy by name. Options: `replies` (scripted), `model`/`base_url` (openai, vllm), `model` (local: a
    model folder, such as a `polar train grpo` checkpoint, or a GGUF file), and each policy's own settings."""
    if name == "scripted":
        return ScriptedPolicy(options.get("replies") or [])
    if name == "empty":
        return ScriptedPolicy([])
    if name == "oracle":
        return OraclePolicy()
    if name == "openai":
        from polar.policies.openai_policy import OpenAIPolicy

        return OpenAIPolicy(**options)
    if name == "vllm":
        from polar.policies.vllm_policy import VLLMPolicy

        return VLLMPolicy(**options)
    if name == "local":
        from pathlib import Path

        from polar.policies.local_policy import LocalPolicy

        if (model := options.pop("model", None)) is not None:
            if not Path(model).exists():
                raise PolarError(f"--model {model}: no such model folder or GGUF file (a checkpoint of "
                                 "`polar train grpo` is RUN/checkpoints/checkpoint-N)")
            options["model_path"] = Path(model)
        return LocalPolicy(**options)
    raise UnknownNameError("policy", name, POLICIES)
