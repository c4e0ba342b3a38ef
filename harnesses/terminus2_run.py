"""Runs Harbor's Terminus-2 once, inside polar's sandbox, on the Debian 13 root's Python 3.13 (harnesses/terminus2.py).

Terminus-2 acts through Harbor's environment interface; here the environment is the sandbox this runs in, so each
of its `exec`s (the tmux commands that type its keystrokes and read the pane) is a shell of this sandbox, and the
agent's tmux session runs the sandbox's own bash. Its model is the gateway, through litellm's OpenAI provider.
Usage: python3 terminus2_run.py SITE MODEL LOGS_DIR (the task in $POLAR_INSTRUCTION, the gateway session's root
in $POLAR_BASE_URL).
"""

import asyncio
import logging
import os
import shutil
import sys
from pathlib import Path

site, model, logs_dir = sys.argv[1:4]
sys.path.insert(0, site)

from harbor.agents.terminus_2 import Terminus2  # noqa: E402
from harbor.environments.base import BaseEnvironment, ExecResult  # noqa: E402
from harbor.models.agent.context import AgentContext  # noqa: E402


class ThisSandbox(BaseEnvironment):
    """Harbor's environment interface over the sandbox this process runs in: commands and files are local."""

    def __init__(self) -> None:  # Harbor's own validates a task folder and its docker-compose; there is none here
        self.default_user = None
        self.logger = logging.getLogger("polar.terminus2")

    @staticmethod
    def type() -> str:
        return "polar-sandbox"

    def _validate_definition(self) -> None:
        """Nothing to validate: the sandbox is already running."""

    async def start(self, force_build: bool) -> None:
        """Already started by polar."""

    async def stop(self, delete: bool) -> None:
        """polar stops the sandbox."""

    async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_sec: int | None = None, user: str | int | None = None) -> ExecResult:
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command, cwd=cwd, env={**os.environ, **(env or {})}, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout_sec)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return ExecResult(stdout="", stderr=f"timed out after {timeout_sec} s", return_code=124)
        return ExecResult(stdout=out.decode(errors="replace"), stderr=err.decode(errors="replace"),
                          return_code=proc.returncode or 0)

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        shutil.copy(source_path, target_path)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        shutil.copytree(source_dir, target_dir, dirs_exist_ok=True)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        shutil.copy(source_path, target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        shutil.copytree(source_dir, target_dir, dirs_exist_ok=True)


async def main() -> None:
    Path(logs_dir).mkdir(parents=True, exist_ok=True)
    agent = Terminus2(
        logs_dir=Path(logs_dir), model_name=f"openai/{model}", api_base=f"{os.environ['POLAR_BASE_URL']}/v1",
        llm_kwargs={"api_key": "polar"}, record_terminal_session=False, enable_summarize=False,
        proactive_summarization_threshold=0, suppress_max_turns_warning=True,
        model_info={"max_input_tokens": 128_000, "max_output_tokens": 16_000, "input_cost_per_token": 0.0,
                    "output_cost_per_token": 0.0},
    )
    sandbox = ThisSandbox()
    await agent.setup(sandbox)
    await agent.run(os.environ["POLAR_INSTRUCTION"], sandbox, AgentContext())


asyncio.run(main())
