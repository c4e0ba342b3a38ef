"""Terminus-2, the agent inside Harbor's PyPI package `harbor` (what Terminal-Bench results are reported with).

It has no tools: each reply is a JSON object whose `commands` are keystrokes it types into a tmux session, and
`task_complete` (twice: it asks to confirm) ends it. `terminus2_run.py` runs it in the sandbox on the Debian 13
root's Python (it needs >= 3.12), with the sandbox itself as its Harbor environment and the gateway as its model.
"""

from pathlib import Path

from polar.harnesses.debian13 import Debian13Harness
from polar.harnesses.declaration import Declaration, ShellTool
from polar.harnesses.external import STATE

RUNNER = Path(__file__).with_name("terminus2_run.py")


class Terminus2(Debian13Harness):
    name = "terminus-2"
    declared = Declaration(api="openai-chat", shell=(ShellTool("commands", "keystrokes"),), finish_tool="task_complete",
                           reply_format="terminus-json", prompt_marker='"keystrokes": String containing the exact',
                           compaction="enable_summarize=False, proactive_summarization_threshold=0",
                           sub_agents="none (its summarizing sub-agents are off with compaction)")
    package = "harbor"
    version = "0.26.0"
    model = "polar-coder"

    def env(self, base_url: str) -> dict[str, str]:
        return {"POLAR_BASE_URL": base_url, "OPENAI_API_KEY": "polar", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

    def files(self, base_url: str) -> dict[str, str]:
        return {f"{STATE}/terminus2_run.py": RUNNER.read_text()}

    def command(self, exe: str) -> str:
        return self.python(f"{STATE}/terminus2_run.py {exe} {self.model} {STATE}/terminus-2")
