"""What is known about a harness, declared once on its adapter and read by everyone else.

The oracle policy finds a request's shell, finish and env tools from these declarations, the tests check each
adapter against them, and harnesses/README.md's table is checked against them
(tests/harnesses/test_cli_harnesses.py), so no list of harness tool names lives anywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from polar.types import Api


@dataclass(frozen=True)
class ShellTool:
    """A tool that runs a shell command: its name, the argument that holds the command, and that argument's form."""

    name: str
    argument: str = "command"
    form: Literal["string", "argv", "list"] = "string"
    """`string`: the command line; `argv`: `["bash", "-lc", line]`; `list`: a list of command lines, `[line]`."""
    required: tuple[tuple[str, str], ...] = ()
    """Other arguments the tool refuses a call without, with a value that fits any command (droid's `riskLevel`)."""
    one_line: bool = False
    """Whether it refuses a script of several lines (OpenHands' `terminal`: one command per call), so the oracle
    sends a script as one line that decodes and runs it."""


@dataclass(frozen=True)
class Declaration:
    """A harness's interface to its model, as the model sees it."""

    api: Api
    """The provider API its model calls come in on."""
    shell: tuple[ShellTool, ...] = ()
    """Its shell tools, preferred first (a CLI may offer another one depending on the model name)."""
    edit_tools: tuple[str, ...] = ()
    """Its file-editing tools."""
    finish_tool: str | None = None
    """A tool whose call ends the episode; None when the harness ends when the model stops calling tools."""
    finish_command: str | None = None
    """A shell command whose run ends the episode (mini-swe-agent's prompt names one)."""
    env_tool_name: str | None = None
    """How the env's own tools (a browser) appear to the model, a format of the tool's name (`mcp__polar__{}`: the
    MCP server registered as `polar`); None when the harness cannot reach them."""
    compaction: str = "not turned off (no switch)"
    """How its context compaction is turned off, or why it is not."""
    sub_agents: str = "none"
    """How its sub-agents are turned off, or that it has none (a sub-agent's calls break the episode's chain)."""
    sub_agent_tools: tuple[str, ...] = ()
    """The tools that would start a sub-agent, which the adapter removes: none of them may be offered."""
    reply_format: str | None = None
    """How a harness that takes its actions from the reply's text, not tool calls, wants them written (the oracle
    writes them so): `terminus-json` (Terminus-2: a JSON object of analysis, plan, `commands` of keystrokes and
    `task_complete`); `aider-whole` (aider's `--edit-format whole`: each file as its path on a line of its own, then
    its entire new content in a ``` fence); `code-block` (the answer harness: the one file in one ```python
    block). None: tool calls, or fenced bash blocks when a request offers no declared tool."""
    prompt_marker: str | None = None
    """Text in the harness's own prompt that tells its requests apart, for a harness with a `reply_format`."""

    def env_tool(self, name: str) -> str | None:
        """The name under which the model sees the env tool `name`."""
        return None if self.env_tool_name is None else self.env_tool_name.format(name)
