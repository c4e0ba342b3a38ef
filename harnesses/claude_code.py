"""Claude Code (`@anthropic-ai/claude-code`), speaking Anthropic Messages to the gateway."""

import json

from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import STATE, ExternalHarness, McpConfig, mcp_url


class ClaudeCode(ExternalHarness):
    name = "claude-code"
    declared = Declaration(api="anthropic-messages", shell=(ShellTool("Bash"),), edit_tools=("Edit", "Write"),
                           env_tool_name="mcp__polar__{}", compaction="DISABLE_AUTO_COMPACT=1",
                           sub_agents="--disallowedTools Agent", sub_agent_tools=("Agent",))
    package = "@anthropic-ai/claude-code"
    version = "2.1.332"
    bin = "node_modules/.bin/claude"
    model = "claude-sonnet-4-5"
    """A name the CLI knows, so it sends its usual request shape; the env's policy answers whatever it says."""

    def env(self, base_url: str) -> dict[str, str]:
        return {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "polar", "ANTHROPIC_MODEL": self.model,
                "ANTHROPIC_SMALL_FAST_MODEL": self.model, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_AUTO_COMPACT": "1",
                "ENABLE_TOOL_SEARCH": "false",  # MCP tools in the request itself, not deferred behind ToolSearch
                "IS_SANDBOX": "1"}  # it runs as root in a container; polar's sandbox is the boundary

    def command(self, exe: str) -> str:
        return (f'{exe} -p "$POLAR_INSTRUCTION" --dangerously-skip-permissions --output-format json '
                "--disallowedTools Agent")

    def mcp(self, base_url: str) -> McpConfig:
        config = {"mcpServers": {"polar": {"type": "http", "url": mcp_url(base_url)}}}
        args = f"--mcp-config {STATE}/mcp.json --strict-mcp-config"
        return McpConfig({f"{STATE}/mcp.json": json.dumps(config)}, args)
