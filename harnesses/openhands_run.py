"""Runs the OpenHands agent (`openhands-sdk` with `openhands-tools`) once, headless, inside polar's sandbox, on the
Debian 13 root's Python 3.13 (harnesses/openhands.py).

Its tools act on this sandbox directly: `terminal` (a plain bash subprocess, not tmux) and `file_editor`; `finish`
ends the run. No condenser (no compaction), no browser of its own, no sub-agents, no stuck detection, no confirmation
prompts; the env's own tools (Web-v0's browser) come from the gateway's MCP server when its URL is given.
Usage: python3 openhands_run.py SITE MODEL [MCP_URL] (the task in $POLAR_INSTRUCTION, the gateway session's root in
$POLAR_BASE_URL).
"""

import os
import sys

site, model, *mcp = sys.argv[1:]
sys.path.insert(0, site)

from openhands.sdk import LLM, Agent, Conversation, Tool  # noqa: E402
from openhands.tools.file_editor import FileEditorTool  # noqa: E402
from openhands.tools.terminal import TerminalTool  # noqa: E402
from pydantic import SecretStr  # noqa: E402

llm = LLM(model=f"openai/{model}", base_url=f"{os.environ['POLAR_BASE_URL']}/v1", api_key=SecretStr("polar"),
          usage_id="agent", num_retries=1)
tools = [Tool(name=TerminalTool.name, params={"terminal_type": "subprocess"}), Tool(name=FileEditorTool.name)]
servers = {"polar": {"url": mcp[0], "transport": "streamable-http"}} if mcp else {}
agent = Agent(llm=llm, condenser=None, tools=tools, mcp_config=servers)
conversation = Conversation(agent=agent, workspace=os.getcwd(), stuck_detection=False, visualizer=None)
conversation.send_message(os.environ["POLAR_INSTRUCTION"])
conversation.run()
