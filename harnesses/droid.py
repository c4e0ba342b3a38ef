"""Factory's Droid (`@factory/cli`), speaking OpenAI Chat Completions to the gateway as a custom model (its BYOK
`customModels`: no Factory login). Installed from its Linux x64 package: the `@factory/cli` wrapper's own platform
dependency at 0.225.1 is missing from the registry. Its calls to Factory's servers (feature flags, cloud sync, usage)
fail in the sandbox, which has no network, and it goes on without them."""

import json

from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import HOME, ExternalHarness, McpConfig, mcp_url

RISK = (("summary", "Run the task's shell steps"), ("riskLevelReason", "It changes files in the task's folder only."),
        ("riskLevel", "medium"))
"""Execute refuses a call without a risk level; `--auto high` runs any level."""
MCP_SERVER = "polar-agentbrowser"
"""Droid defers every MCP server's tools behind its ToolSearch tool (out of the request until the model searches for
them) except those of a server whose name contains `github` or `agentbrowser`: so the env's browser is registered under
such a name, and its tools are in the request like every other CLI's."""


class Droid(ExternalHarness):
    name = "droid"
    declared = Declaration(api="openai-chat", shell=(ShellTool("Execute", required=RISK),),
                           edit_tools=("Edit", "Create"), env_tool_name=f"{MCP_SERVER}___{{}}",
                           compaction="settings.json compactionThresholdCheckEnabled = false",
                           sub_agents="--remove-tools Task", sub_agent_tools=("Task",))
    package = "@factory/cli-linux-x64"
    version = "0.225.2"
    bin = "node_modules/@factory/cli-linux-x64/bin/droid"
    model = "polar-coder"

    def env(self, base_url: str) -> dict[str, str]:
        return {"FACTORY_DROID_AUTO_UPDATE_ENABLED": "false", "FACTORY_DISABLE_DYNAMIC_CONFIG": "1",
                "FACTORY_DISABLE_KEYRING": "1"}

    def files(self, base_url: str) -> dict[str, str]:
        model = {"model": self.model, "displayName": self.model, "baseUrl": f"{base_url}/v1", "apiKey": "polar",
                 "provider": "generic-chat-completion-api", "maxOutputTokens": 16000}
        settings = {"customModels": [model], "cloudSessionSync": False, "compactionThresholdCheckEnabled": False}
        return {f"{HOME}/.factory/settings.json": json.dumps(settings, indent=2)}

    def command(self, exe: str) -> str:
        return f'{exe} exec --auto high -m custom:{self.model} --remove-tools Task "$POLAR_INSTRUCTION"'

    def mcp(self, base_url: str) -> McpConfig:
        server = {"type": "http", "url": mcp_url(base_url), "oauth": False, "disabled": False}
        return McpConfig({f"{HOME}/.factory/mcp.json": json.dumps({"mcpServers": {MCP_SERVER: server}}, indent=2)})
