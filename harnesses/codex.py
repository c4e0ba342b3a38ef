"""Codex CLI (`@openai/codex`), speaking OpenAI Responses to the gateway (`wire_api = "responses"`)."""

from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import HOME, ExternalHarness, McpConfig, mcp_url

CODEX_HOME = f"{HOME}/.codex"


class Codex(ExternalHarness):
    name = "codex"
    declared = Declaration(api="openai-responses", edit_tools=("apply_patch",), env_tool_name="mcp__polar__{}",
                           shell=(ShellTool("exec_command", "cmd"), ShellTool("shell_command"),
                                  ShellTool("shell", form="argv")),
                           sub_agents="not offered by default")
    """`shell`/`shell_command` are what it offers for model names outside its catalog; the gateway flattens its
    MCP `namespace` tool to `mcp__polar__<tool>`."""
    package = "@openai/codex"
    version = "0.171.0"
    bin = "node_modules/.bin/codex"
    model = "gpt-5.5"
    """A name in Codex's bundled catalog, so it offers its full tool set (apply_patch included)."""
    mcp_model = "polar"
    """A name outside the catalog, used when the env has tools of its own: with a catalog model Codex defers MCP
    tools behind its tool search; with this one it offers them as a `namespace` tool, which the gateway carries."""
    extra_models = (mcp_model,)

    def env(self, base_url: str) -> dict[str, str]:
        return {"CODEX_HOME": CODEX_HOME, "POLAR_KEY": "polar"}

    def files(self, base_url: str) -> dict[str, str]:
        return {f"{CODEX_HOME}/config.toml": self.config(base_url, self.model)}

    def mcp(self, base_url: str) -> McpConfig:
        server = f'\n[mcp_servers.polar]\nurl = "{mcp_url(base_url)}"\n'
        return McpConfig({f"{CODEX_HOME}/config.toml": self.config(base_url, self.mcp_model) + server})

    def config(self, base_url: str, model: str) -> str:
        """config.toml: the gateway as the model provider, no approvals, no updates, no telemetry."""
        return f'''model = "{model}"
model_provider = "polar"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.polar]
name = "polar"
base_url = "{base_url}/v1"
env_key = "POLAR_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[analytics]
enabled = false

[otel]
exporter = "none"
'''

    def command(self, exe: str) -> str:
        flags = "--skip-git-repo-check --dangerously-bypass-approvals-and-sandbox --json"
        return f'{exe} exec {flags} "$POLAR_INSTRUCTION"'
