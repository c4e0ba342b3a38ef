"""aider (`aider-chat` from PyPI), speaking OpenAI Chat Completions through litellm. It has no tools: the model
writes whole files in its reply (`--edit-format whole`) and aider saves them. Installed with pip into the cache and
run by the sandbox's own `python3` (same minor version as the installing Python), like mini-swe-agent."""

import json

from polar.harnesses.declaration import Declaration
from polar.harnesses.external import HOME, STATE, ExternalHarness

METADATA = f"{HOME}/.aider/polar-models.json"
"""The model's context window, given locally: without it aider fetches litellm's price list from the network."""


class Aider(ExternalHarness):
    name = "aider"
    declared = Declaration(api="openai-chat", reply_format="aider-whole", prompt_marker="*file listing*",
                           compaction="not turned off: one --message stays under its summary threshold")
    package = "aider-chat"
    version = "0.86.2"
    bin = "site"
    installer = "pip"
    model = "polar-coder"

    def env(self, base_url: str) -> dict[str, str]:
        return {"PYTHONPATH": self.exe, "OPENAI_API_BASE": f"{base_url}/v1", "OPENAI_API_KEY": "polar",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

    def files(self, base_url: str) -> dict[str, str]:
        info = {"max_input_tokens": 128000, "max_output_tokens": 16000, "input_cost_per_token": 0,
                "output_cost_per_token": 0, "litellm_provider": "openai", "mode": "chat"}
        return {METADATA: json.dumps({f"openai/{self.model}": info})}

    def command(self, exe: str) -> str:
        # --no-git: the workspace need not be a repository, and aider must not commit in it; its history files go to
        # polar's state folder, not into the graded workspace; shell commands it is offered are never run
        return (f"python3 -m aider --model openai/{self.model} --model-metadata-file {METADATA} --edit-format whole "
                "--no-git --yes-always --no-analytics --no-check-update --no-stream --no-pretty --no-fancy-input "
                "--no-show-model-warnings --no-show-release-notes --no-detect-urls --no-suggest-shell-commands "
                "--no-auto-lint --map-tokens 0 "
                f"--chat-history-file {STATE}/aider.chat.md --input-history-file {STATE}/aider.input "
                '--message "$POLAR_INSTRUCTION"')
