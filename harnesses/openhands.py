"""OpenHands, as its SDK (`openhands-sdk` and `openhands-tools` from PyPI) run headless by `openhands_run.py`.

It needs Python >= 3.12, so it runs on the Debian 13 root's Python (`debian13.py`); its model calls go through
litellm's OpenAI provider to the gateway.
"""

from pathlib import Path

from polar.harnesses.debian13 import Debian13Harness
from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import STATE, McpConfig, mcp_url

RUNNER = Path(__file__).with_name("openhands_run.py")


class OpenHands(Debian13Harness):
    name = "openhands"
    declared = Declaration(api="openai-chat", shell=(ShellTool("terminal", one_line=True),),
                           edit_tools=("file_editor",), finish_tool="finish", env_tool_name="{}",
                           compaction="condenser=None",
                           sub_agents="none offered (no task or delegate tool)")
    package = "openhands-sdk"
    version = "1.58.2"
    no_deps = (f"openhands-tools=={version}", "libtmux==0.62.0", "func-timeout==4.3.5", "binaryornot==0.6.0",
               "cachetools==8.0.2")
    """Its tools, without their browser-use dependency (the browser tool is not offered; browser-use's exact pins
    send pip's resolver backtracking for minutes): the rest of their dependencies come with the SDK."""
    model = "polar-coder"

    def env(self, base_url: str) -> dict[str, str]:
        return {"POLAR_BASE_URL": base_url, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENHANDS_SUPPRESS_BANNER": "1",
                "LMNR_PROJECT_API_KEY": "", "OTEL_SDK_DISABLED": "true"}

    def files(self, base_url: str) -> dict[str, str]:
        return {f"{STATE}/openhands_run.py": RUNNER.read_text()}

    def command(self, exe: str) -> str:
        return self.python(f"{STATE}/openhands_run.py {exe} {self.model}")

    def mcp(self, base_url: str) -> McpConfig:
        return McpConfig(args=mcp_url(base_url))
