"""Codex CLI (`@openai/codex`), speaking OpenAI Responses to the gateway (`wire_api = "responses"`)."""

from polar.harnesses.external import ExternalHarness

CODEX_HOME = "/home/polar/.codex"


class Codex(ExternalHarness):
    name = "codex"
    package = "@openai/codex"
    version = "0.171.0"
    bin = "node_modules/.bin/codex"
    model = "gpt-5.5"
    """A name in Codex's bundled catalog, so it offers its full tool set (apply_patch included)."""

    def env(self, base_url: str) -> dict[str, str]:
        return {"CODEX_HOME": CODEX_HOME, "POLAR_KEY": "polar"}

    def files(self, base_url: str) -> dict[str, str]:
        return {f"{CODEX_HOME}/config.toml": f'''model = "{self.model}"
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
'''}

    def command(self, exe: str) -> str:
        flags = "--skip-git-repo-check --dangerously-bypass-approvals-and-sandbox --json"
        return f'{exe} exec {flags} "$POLAR_INSTRUCTION"'
