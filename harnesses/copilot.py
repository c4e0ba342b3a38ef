"""GitHub Copilot CLI (`@github/copilot`), speaking OpenAI Chat Completions to the gateway as a custom provider
(its BYOK mode: no GitHub login) with `COPILOT_OFFLINE=true`, which skips authentication, telemetry, web tools, the
GitHub MCP server and updates."""

import json

from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import HOME, ExternalHarness, McpConfig, mcp_url


class Copilot(ExternalHarness):
    name = "copilot"
    declared = Declaration(api="openai-chat", shell=(ShellTool("bash"),), edit_tools=("edit", "create"),
                           env_tool_name="polar-{}", sub_agents="--excluded-tools task",
                           sub_agent_tools=("task",))
    package = "@github/copilot"
    version = "1.0.102"
    bin = "node_modules/.bin/copilot"
    model = "polar-coder"

    def env(self, base_url: str) -> dict[str, str]:
        return {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": f"{base_url}/v1",
                "COPILOT_PROVIDER_API_KEY": "polar", "COPILOT_MODEL": self.model, "COPILOT_AUTO_UPDATE": "false"}

    def command(self, exe: str) -> str:
        return (f'{exe} -p "$POLAR_INSTRUCTION" --allow-all --no-auto-update --disable-client-telemetry '
                "--disable-builtin-mcps --excluded-tools task")

    def mcp(self, base_url: str) -> McpConfig:
        server = {"type": "http", "url": mcp_url(base_url), "tools": ["*"]}
        return McpConfig({f"{HOME}/.copilot/mcp-config.json": json.dumps({"mcpServers": {"polar": server}}, indent=2)})
