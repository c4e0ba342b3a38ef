"""Gemini CLI (`@google/gemini-cli`), speaking Gemini `streamGenerateContent` to the gateway."""

import json

from polar.harnesses.external import ExternalHarness

SETTINGS = {"general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "security": {"auth": {"selectedType": "gemini-api-key"}}}


class GeminiCli(ExternalHarness):
    name = "gemini-cli"
    package = "@google/gemini-cli"
    version = "0.61.0"
    bin = "node_modules/.bin/gemini"
    model = "gemini-2.5-pro"
    """Passed with -m, which also skips the CLI's model-routing call."""

    def env(self, base_url: str) -> dict[str, str]:
        return {"GOOGLE_GEMINI_BASE_URL": base_url, "GEMINI_API_KEY": "polar", "GEMINI_CLI_TRUST_WORKSPACE": "true"}

    def files(self, base_url: str) -> dict[str, str]:
        return {"/home/polar/.gemini/settings.json": json.dumps(SETTINGS, indent=2)}

    def command(self, exe: str) -> str:
        return f'{exe} -p "$POLAR_INSTRUCTION" --yolo --skip-trust -o json -m {self.model}'
