"""Cline's CLI (`cline`), speaking OpenAI Chat Completions to the gateway as its `openai-compatible` provider. The
provider file is what `cline auth -p openai-compatible -k KEY -m MODEL -b URL` writes, written here directly."""

import json

from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import HOME, ExternalHarness, McpConfig, mcp_url


class Cline(ExternalHarness):
    name = "cline"
    declared = Declaration(api="openai-chat", shell=(ShellTool("run_commands", argument="commands", form="list"),),
                           edit_tools=("editor",), env_tool_name="polar__{}", compaction="--compaction off",
                           sub_agents="not turned off: its spawn_agent and team_* tools are offered")
    package = "cline"
    version = "3.0.65"
    bin = "node_modules/.bin/cline"
    model = "polar-coder"

    def env(self, base_url: str) -> dict[str, str]:
        return {"DO_NOT_TRACK": "1", "DISABLE_TELEMETRY": "1", "CLINE_NO_AUTO_UPDATE": "1"}

    def files(self, base_url: str) -> dict[str, str]:
        settings = {"provider": "openai-compatible", "apiKey": "polar", "model": self.model,
                    "baseUrl": f"{base_url}/v1"}
        providers = {"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
                     "providers": {"openai-compatible": {"settings": settings, "updatedAt": "2026-01-01T00:00:00.000Z",
                                                           "tokenSource": "manual"}}}
        return {f"{HOME}/.cline/data/settings/providers.json": json.dumps(providers, indent=2)}

    def mcp(self, base_url: str) -> McpConfig:
        server = {"type": "streamableHttp", "url": mcp_url(base_url)}
        return McpConfig({f"{HOME}/.cline/data/settings/cline_mcp_settings.json":
                          json.dumps({"mcpServers": {"polar": server}}, indent=2)})

    def command(self, exe: str) -> str:
        return f'{exe} --json -P openai-compatible -m {self.model} --compaction off "$POLAR_INSTRUCTION"'
