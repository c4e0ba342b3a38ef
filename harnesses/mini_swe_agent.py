"""mini-swe-agent (PyPI), speaking OpenAI Chat Completions through litellm. Installed with pip into the
cache and run by the sandbox's own `python3` (same minor version as the installing Python)."""

from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import ExternalHarness


class MiniSweAgent(ExternalHarness):
    name = "mini-swe-agent"
    declared = Declaration(api="openai-chat", shell=(ShellTool("bash"),),
                           finish_command="echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", compaction="none")
    package = "mini-swe-agent"
    version = "2.4.6"
    bin = "site"
    installer = "pip"
    model = "polar-coder"

    def env(self, base_url: str) -> dict[str, str]:
        return {"PYTHONPATH": self.exe, "OPENAI_BASE_URL": f"{base_url}/v1", "OPENAI_API_KEY": "polar",
                "MSWEA_CONFIGURED": "true", "MSWEA_SILENT_STARTUP": "1", "MSWEA_COST_TRACKING": "ignore_errors",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "2"}

    def command(self, exe: str) -> str:
        return (f'python3 -m minisweagent.run.mini -y --exit-immediately -m openai/{self.model} -c mini.yaml '
                '-o /tmp/polar/trajectory.json -t "$POLAR_INSTRUCTION"')
