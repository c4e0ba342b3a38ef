"""Qwen Code (`@qwen-code/qwen-code`), speaking OpenAI Chat Completions to the gateway."""

import json
from pathlib import Path

from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import HOME, ExternalHarness, McpConfig
from polar.harnesses.gemini_cli import mcp_servers

SETTINGS_FILE = f"{HOME}/.qwen/settings.json"
SETTINGS = {"memory": {"enableManagedAutoMemory": False}, "tools": {"exclude": ["agent"]}}
"""No sub-agents, and no managed auto-memory, a side agent that after the task makes calls of its own to write
memories (five more for a one-call episode, retried with back-off), no part of the agent's work."""


class QwenCode(ExternalHarness):
    name = "qwen-code"
    declared = Declaration(api="openai-chat", shell=(ShellTool("run_shell_command"),),
                           edit_tools=("edit", "write_file"), env_tool_name="mcp__polar__{}",
                           sub_agents="settings tools.exclude: agent", sub_agent_tools=("agent",))
    package = "@qwen-code/qwen-code"
    version = "0.24.4"
    bin = "node_modules/.bin/qwen"
    model = "qwen3-coder"

    def after_install(self, target: Path) -> None:
        for rg in target.glob("node_modules/@qwen-code/qwen-code/vendor/ripgrep/*/rg"):
            rg.chmod(0o755)  # shipped without its execute bit

    def env(self, base_url: str) -> dict[str, str]:
        return {"OPENAI_BASE_URL": f"{base_url}/v1", "OPENAI_API_KEY": "polar", "OPENAI_MODEL": self.model,
                "QWEN_USAGE_STATISTICS_ENABLED": "false", "QWEN_TELEMETRY_ENABLED": "false",
                "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}

    def files(self, base_url: str) -> dict[str, str]:
        return {SETTINGS_FILE: json.dumps(SETTINGS, indent=2)}

    def command(self, exe: str) -> str:
        return f'{exe} --yolo -o text "$POLAR_INSTRUCTION"'

    def mcp(self, base_url: str) -> McpConfig:
        # alwaysLoadTools: the MCP tools in the request itself, not deferred behind tool_search
        settings = SETTINGS | mcp_servers(base_url, alwaysLoadTools=True)
        return McpConfig({SETTINGS_FILE: json.dumps(settings, indent=2)})
