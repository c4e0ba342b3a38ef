"""opencode (`opencode-ai`), speaking OpenAI Chat Completions through its bundled openai-compatible provider."""

import json

from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import HOME, ExternalHarness, McpConfig, mcp_url

CONFIG = f"{HOME}/.config/opencode"


class Opencode(ExternalHarness):
    name = "opencode"
    declared = Declaration(api="openai-chat", shell=(ShellTool("bash"),), edit_tools=("edit", "write"),
                           env_tool_name="polar_{}", compaction="OPENCODE_DISABLE_AUTOCOMPACT=1",
                           sub_agents="config tools.task: false", sub_agent_tools=("task",))
    package = "opencode-ai"
    version = "1.18.33"
    bin = "node_modules/.bin/opencode"
    model = "polar-coder"
    """Not containing `gpt-`: opencode swaps its write/edit tools for apply_patch on such ids."""

    def env(self, base_url: str) -> dict[str, str]:
        return {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_FFF": "1",
                "OPENCODE_DISABLE_AUTOCOMPACT": "1", "TMPDIR": f"{HOME}/tmp"}

    def config(self, base_url: str) -> dict[str, object]:
        """opencode.json: the gateway as an openai-compatible provider, no sharing, no updates."""
        return {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
                "model": f"polar/{self.model}", "small_model": f"polar/{self.model}", "tools": {"task": False},
                "provider": {"polar": {"npm": "@ai-sdk/openai-compatible", "name": "polar",
                                       "options": {"baseURL": f"{base_url}/v1", "apiKey": "polar"},
                                       "models": {self.model: {"name": self.model, "tool_call": True}}}}}

    def files(self, base_url: str) -> dict[str, str]:
        plugin = {"@opencode-ai/plugin": self.version}  # present, so opencode does not npm-install it at start
        return {f"{CONFIG}/opencode.json": json.dumps(self.config(base_url), indent=2),
                f"{CONFIG}/package.json": json.dumps({"dependencies": plugin}),
                f"{CONFIG}/package-lock.json": json.dumps({"lockfileVersion": 3,
                                                           "packages": {"": {"dependencies": plugin}}}),
                f"{CONFIG}/node_modules/.keep": "", f"{HOME}/tmp/.keep": ""}

    def command(self, exe: str) -> str:
        # on stdin: given as an argument, opencode wraps a prompt with spaces in literal quotes
        return f'printf %s "$POLAR_INSTRUCTION" | {exe} run --auto --title polar'

    def mcp(self, base_url: str) -> McpConfig:
        server = {"type": "remote", "url": mcp_url(base_url), "enabled": True, "oauth": False}  # no OAuth probing
        config = self.config(base_url) | {"mcp": {"polar": server}}
        return McpConfig({f"{CONFIG}/opencode.json": json.dumps(config, indent=2)})
