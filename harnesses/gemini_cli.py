"""Gemini CLI (`@google/gemini-cli`), speaking Gemini `streamGenerateContent` to the gateway."""

import json

from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import HOME, ExternalHarness, McpConfig, mcp_url

SETTINGS_FILE = f"{HOME}/.gemini/settings.json"
SETTINGS = {"general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "security": {"auth": {"selectedType": "gemini-api-key"}}, "tools": {"exclude": ["invoke_agent"]}}


class GeminiCli(ExternalHarness):
    name = "gemini-cli"
    declared = Declaration(api="gemini", shell=(ShellTool("run_shell_command"),), edit_tools=("replace", "write_file"),
                           env_tool_name="mcp_polar_{}", sub_agents="settings tools.exclude: invoke_agent",
                           sub_agent_tools=("invoke_agent",))
    package = "@google/gemini-cli"
    version = "0.61.0"
    bin = "node_modules/.bin/gemini"
    model = "gemini-2.5-pro"
    """Passed with -m, which also skips the CLI's model-routing call."""

    def env(self, base_url: str) -> dict[str, str]:
        return {"GOOGLE_GEMINI_BASE_URL": base_url, "GEMINI_API_KEY": "polar", "GEMINI_CLI_TRUST_WORKSPACE": "true"}

    def files(self, base_url: str) -> dict[str, str]:
        return {SETTINGS_FILE: json.dumps(SETTINGS, indent=2)}

    def command(self, exe: str) -> str:
        return f'{exe} -p "$POLAR_INSTRUCTION" --yolo --skip-trust -o json -m {self.model}'

    def mcp(self, base_url: str) -> McpConfig:
        return McpConfig({SETTINGS_FILE: json.dumps(SETTINGS | mcp_servers(base_url), indent=2)})


def mcp_servers(base_url: str, **options: object) -> dict[str, dict]:
    """The `mcpServers` settings entry of Gemini CLI and its forks: the gateway's MCP server, trusted (no prompts),
    with the fork's own `options`."""
    return {"mcpServers": {"polar": {"httpUrl": mcp_url(base_url), "trust": True, **options}}}
