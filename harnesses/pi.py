"""pi (`@mariozechner/pi-coding-agent`), speaking OpenAI Chat Completions to the gateway."""

import json

from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import HOME, ExternalHarness


class Pi(ExternalHarness):
    name = "pi"
    declared = Declaration(api="openai-chat", shell=(ShellTool("bash"),), edit_tools=("edit", "write"),
                           compaction="settings.json compaction.enabled = false")
    package = "@mariozechner/pi-coding-agent"
    version = "0.73.1"
    bin = "node_modules/.bin/pi"
    model = "polar-coder"

    def env(self, base_url: str) -> dict[str, str]:
        return {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}

    def files(self, base_url: str) -> dict[str, str]:
        models = {"providers": {"polar": {
            "baseUrl": f"{base_url}/v1", "api": "openai-completions", "apiKey": "polar",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": self.model, "name": self.model, "reasoning": False, "input": ["text"],
                        "contextWindow": 128000, "maxTokens": 16000,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}}
        return {f"{HOME}/.pi/agent/models.json": json.dumps(models, indent=2),
                f"{HOME}/.pi/agent/settings.json": json.dumps({"enableInstallTelemetry": False,
                                                               "compaction": {"enabled": False}})}

    def command(self, exe: str) -> str:
        return f'{exe} -p --provider polar --model {self.model} "$POLAR_INSTRUCTION"'
