"""polar's own minimal tool agent: bash, view, create, str_replace and submit, as OpenAI function tools.

It runs in-process and executes its tools in the sandbox, so it needs no gateway hop. Tools the env provides
for the episode (a browser) are offered next to these, or instead of the workspace tools when the toolset is
exclusive. Models without tool calling can answer in plain text instead: one fenced ```bash block is run, a
line `submit` ends the episode. Anything malformed goes back to the model as an error message, never as an
exception.
"""

from __future__ import annotations

import base64
import copy
import posixpath
import re
import shlex

from polar import __version__
from polar.errors import SandboxError
from polar.harnesses.declaration import Declaration, ShellTool
from polar.protocols import HarnessExit, Mount, Sandbox, Task, ToolOutput, ToolSet
from polar.types import ModelReply, ModelRequest, ToolCall, function_tool

OBSERVATION_CHARS = 12_000
BASH_TIMEOUT_S = 120.0


TOOLS = [
    function_tool("bash", "Run a shell command in the workspace. The shell persists between calls (cwd, variables); "
          "there is no network and no interactive input.", command=("string", "the command to run")),
    function_tool("view", "Show a file with line numbers, or list a directory.",
          path=("string", "file or directory, relative to the workspace"),
          view_range=("array", "(optional) [first, last] line numbers to show")),
    function_tool("create", "Create or overwrite a file with the given text.",
          path=("string", "file path, relative to the workspace"), file_text=("string", "the whole new content")),
    function_tool("str_replace", "Replace one exact, unique occurrence of old_str in a file with new_str.",
          path=("string", "file path, relative to the workspace"), old_str=("string", "the exact text to replace"),
          new_str=("string", "the replacement text")),
]
SUBMIT = function_tool("submit", "Finish: your work will be graded.")
TOOLS.append(SUBMIT)

SYSTEM_PROMPT = """You are a careful software engineer working in a Linux sandbox. Solve the task by using the \
tools: inspect files, edit them, run commands to test your work, then call submit.
If you cannot call tools, reply with exactly one ```bash code block holding one command to run, or with a \
line containing only the word submit when you are done."""

ENV_TOOLS_PROMPT = """You are a careful agent. Solve the task with the tools you are given, checking the result \
of each step, then call submit when the task is done."""

FORMAT_HELP = ("No tool call found. Call one of the tools, or reply with one ```bash block holding a command, "
               "or a line with only `submit` when you are done.")

_BASH_BLOCK = re.compile(r"```(?:bash|sh|shell)?[ \t]*\n(.*?)```", re.DOTALL)
_SUBMIT_LINE = re.compile(r"^\s*`?submit`?\s*$", re.IGNORECASE | re.MULTILINE)


def clip(text: str, limit: int = OBSERVATION_CHARS) -> str:
    """Keep the head and tail of a long observation, saying how much was left out."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters left out ...]\n{text[-half:]}"


class _Submitted(Exception):
    pass


class _WriteRefused(Exception):
    """The sandbox refused to write a file the model asked for; the message says why."""


class BuiltinRun:
    """One episode of the built-in agent."""

    def __init__(self, task: Task, sandbox: Sandbox, env_tools: ToolSet | None = None):
        self.sandbox, self.env_tools = sandbox, env_tools
        exclusive = env_tools is not None and env_tools.exclusive
        own = [SUBMIT] if exclusive else TOOLS
        self.tools = [*(env_tools.specs if env_tools else ()), *own]
        self.tool_names = [t["function"]["name"] for t in self.tools]
        self.env_tool_names = set(self.tool_names[:len(self.tools) - len(own)])
        self.messages: list[dict] = [
            {"role": "system", "content": ENV_TOOLS_PROMPT if exclusive else SYSTEM_PROMPT},
            {"role": "user", "content": task.instruction},
        ]

    def _request(self) -> ModelRequest:
        return ModelRequest(messages=copy.deepcopy(self.messages), tools=copy.deepcopy(self.tools), api="builtin")

    async def advance(self, reply: ModelReply | None) -> ModelRequest | HarnessExit:
        if reply is None:
            return self._request()
        self.messages.append(reply.to_openai_message())
        try:
            if reply.tool_calls:
                for call in reply.tool_calls:
                    self.messages.append(
                        {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": await self._call(call)}
                    )
            else:
                self.messages.append({"role": "user", "content": await self._plain_text(reply.content or "")})
        except _Submitted:
            return HarnessExit(final_answer=reply.content)
        return self._request()

    async def _plain_text(self, text: str) -> str:
        if (block := _BASH_BLOCK.search(text)) and "bash" in self.tool_names:
            return await self._bash(block.group(1).strip())
        if _SUBMIT_LINE.search(text):
            raise _Submitted
        return FORMAT_HELP

    async def _call(self, call: ToolCall) -> str | list[dict]:
        try:
            args = call.parsed_arguments()
            if call.name in self.env_tool_names:
                assert self.env_tools is not None
                return _tool_message_content(await self.env_tools.call(call.name, args))
            if call.name not in self.tool_names:
                return f"Error: unknown tool {call.name!r}; the tools are: {', '.join(self.tool_names)}."
            match call.name:
                case "bash":
                    return await self._bash(_str(args, "command"))
                case "view":
                    return await self._view(_str(args, "path"), args.get("view_range"))
                case "create":
                    await self._write(_str(args, "path"), _str(args, "file_text"))
                    return f"Wrote {args['path']}."
                case "str_replace":
                    return await self._str_replace(_str(args, "path"), _str(args, "old_str"), _str(args, "new_str"))
                case _:  # submit, the only tool left
                    raise _Submitted
        except (ValueError, TypeError) as e:
            return f"Error: {e}"
        except _WriteRefused as e:
            return f"Error: {e} (no change was made)"
        except FileNotFoundError as e:
            return f"Error: no such file: {e}"

    async def _bash(self, command: str) -> str:
        if not command.strip():
            return "Error: the command is empty."
        result = await self.sandbox.exec(command, timeout=BASH_TIMEOUT_S)
        return clip(f"exit code: {result.exit_code}\n{result.output}")

    async def _view(self, path: str, view_range: object) -> str:
        where = shlex.quote(posixpath.normpath(posixpath.join(self.sandbox.spec.workdir, path)))
        listing = await self.sandbox.exec(
            f"test -d {where} && find {where} -maxdepth 2 -not -path '*/.*' | sort | head -200"
        )
        if listing.exit_code == 0:
            return listing.output
        lines = (await self.sandbox.read(path)).decode("utf-8", errors="replace").splitlines()
        first, last = 1, len(lines)
        if view_range is not None:
            pair = isinstance(view_range, list) and len(view_range) == 2
            if not (pair and all(isinstance(n, int) for n in view_range)):
                raise ValueError("view_range must be a list of two line numbers, like [1, 40]")
            first = max(1, view_range[0])
            last = len(lines) if view_range[1] == -1 else min(len(lines), view_range[1])
        return clip("\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(first, last + 1)) or "(empty file)")

    async def _str_replace(self, path: str, old: str, new: str) -> str:
        text = (await self.sandbox.read(path)).decode("utf-8")
        count = text.count(old) if old else 0
        if count != 1:
            problem = "was not found" if count == 0 else f"appears {count} times; add context to make it unique"
            return f"Error: old_str {problem} in {path}. No change was made."
        await self._write(path, text.replace(old, new, 1))
        return f"Edited {path}."

    async def _write(self, path: str, text: str) -> None:
        """Write a file for the model. A write the sandbox refuses (a read-only path, a directory, a full disk) is
        the model's mistake to see and fix, not the end of the episode; a sandbox that is really gone fails the
        next command too, and that one ends the episode."""
        try:
            await self.sandbox.write(path, text)
        except SandboxError as e:
            raise _WriteRefused(str(e)) from e

    async def stop(self) -> None:
        """Nothing to stop: the tools ran in the sandbox, which the env stops."""


def _tool_message_content(output: ToolOutput) -> str | list[dict]:
    """A tool message's content: the text, plus the image as an OpenAI image part when there is one."""
    text = clip(output.text)
    if output.image_png is None:
        return text
    url = "data:image/png;base64," + base64.b64encode(output.image_png).decode()
    return [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}]


def _str(args: dict, key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ValueError(f"argument {key!r} is required and must be a string")
    return value


class BuiltinHarness:
    name = "builtin"
    version = __version__
    install = "built in"
    declared = Declaration(api="builtin", shell=(ShellTool("bash"),), edit_tools=("create", "str_replace"),
                           finish_tool="submit", env_tool_name="{}", compaction="none")

    def sandbox_mounts(self) -> tuple[Mount, ...]:
        return ()

    async def launch(self, task: Task, sandbox: Sandbox, tools: ToolSet | None = None) -> BuiltinRun:
        return BuiltinRun(task, sandbox, tools)
