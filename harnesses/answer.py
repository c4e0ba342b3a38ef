"""The answer-format harness: the model answers with the whole module in one fenced code block, which becomes the
task's file.

Why: a small model asked for a function in a ```python block writes a correct one far more often than it drives a
tool loop (SmolLM2-135M answers the built-in harness in prose and never writes the module), so this is where RL on
the CPU can start. The request is the task's instruction with the file's current text; the first fenced block of
the reply is written over that file and the task is graded as usual: the reward is the family's, nothing pays for
the format. With `attempts` > 1, a reply without a block, or whose module does not import, gets the error back and
another try (the hidden tests stay hidden: what comes back is only what running the module itself shows).
It fills one file: a workspace with several (or none) ends the episode at once with a `harness_error` saying so.
"""

from __future__ import annotations

import copy
import re
import shlex

from polar import __version__
from polar.harnesses.builtin import clip
from polar.harnesses.declaration import Declaration
from polar.protocols import HarnessExit, Mount, Sandbox, Task, ToolSet
from polar.types import ModelReply, ModelRequest

SYSTEM_PROMPT = """You are a careful Python programmer. Answer with the complete file in one ```python code block: \
the block becomes the file, exactly as you write it, and hidden unit tests grade it."""

PROMPT_MARKER = "the block becomes the file"
"""The words of the system prompt by which the oracle recognises this harness's requests."""

IMPORT_TIMEOUT_S = 10.0

_BLOCK = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[ \t]*\n(.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)
PYTHON = ("", "python", "python3", "py")

STOP = "\n```\n"
"""The request's stop text: the reply ends where its code block closes, so no token is sampled for prose after it (a
policy that leaves the stop text out of the reply, as OpenAI's API does, leaves the block open at the end)."""

NO_BLOCK = "No ```python code block found. Reply with the complete file in one ```python block."


def answer_block(text: str, stopped: bool = False) -> str | None:
    """The code of the first fenced block tagged python (or untagged) in a reply; None when there is none. `stopped`:
    the reply ended on a stop text, so a block still open at its end was closed by it (one cut short by the token limit
    is not an answer)."""
    if stopped and text.count("```") % 2 == 1:
        text = text.rstrip("\n") + STOP
    return next((m.group(2) for m in _BLOCK.finditer(text) if m.group(1).lower() in PYTHON), None)


class AnswerRun:
    """One episode: ask for the file, write what comes back, and end (or, with attempts left, say what broke)."""

    def __init__(self, task: Task, sandbox: Sandbox, tools: ToolSet | None, attempts: int):
        self.task, self.sandbox, self.tools, self.attempts = task, sandbox, tools, attempts
        self.messages: list[dict] = []
        self.module = ""

    async def advance(self, reply: ModelReply | None) -> ModelRequest | HarnessExit:
        if reply is None:
            return await self._start()
        self.messages.append(reply.to_openai_message())
        code = answer_block(reply.content or "", stopped=reply.finish_reason == "stop")
        if code is not None:
            await self.sandbox.write(self.module, code)
        replies = sum(1 for m in self.messages if m["role"] == "assistant")
        if replies >= self.attempts:
            return HarnessExit(final_answer=reply.content)
        problem = NO_BLOCK if code is None else await self._import_error()
        if problem is None:
            return HarnessExit(final_answer=reply.content)
        self.messages.append({"role": "user", "content": problem})
        return self._request()

    async def _start(self) -> ModelRequest | HarnessExit:
        if self.tools is not None:
            return HarnessExit(error=f"task {self.task.id} is done with the env's own tools ({len(self.tools.specs)} "
                                     "of them), which the answer harness cannot call; use --harness builtin")
        listing = await self.sandbox.exec("find . -mindepth 1 -maxdepth 1 -type f -not -name '.*' -printf '%P\\n'")
        files = sorted(listing.output.split())
        if listing.exit_code != 0 or len(files) != 1:
            return HarnessExit(error=f"the answer harness fills exactly one file from one code block, and task "
                                     f"{self.task.id} has {len(files)} to write ({', '.join(files) or 'none'}); use a "
                                     "harness with file tools for it (--harness builtin)")
        self.module = files[0]
        current = (await self.sandbox.read(self.module)).decode("utf-8", errors="replace")
        self.messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"{self.task.instruction}\n\n{self.module}:\n```python\n{current}```"},
        ]
        return self._request()

    async def _import_error(self) -> str | None:
        """What importing the module in the sandbox prints when it fails; None when it imports."""
        stem = self.module.removesuffix(".py")
        result = await self.sandbox.exec(f"python3 -c {shlex.quote(f'import {stem}')}", timeout=IMPORT_TIMEOUT_S)
        if result.exit_code == 0:
            return None
        return clip(f"Importing {self.module} failed:\n{result.output}\nReply with the whole corrected file in one "
                    "```python block.", 4000)

    def _request(self) -> ModelRequest:
        return ModelRequest(messages=copy.deepcopy(self.messages), params={"stop": [STOP]}, api="builtin")

    async def stop(self) -> None:
        """Nothing to stop: the harness runs nothing in the sandbox but its one import check."""


class AnswerHarness:
    """`--harness answer`: one turn by default; `attempts` replies at most, while the module does not import."""

    name = "answer"
    version = __version__
    install = "built in"
    declared = Declaration(api="builtin", compaction="none", reply_format="code-block", prompt_marker=PROMPT_MARKER)

    def __init__(self, attempts: int = 1):
        if attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {attempts}")
        self.attempts = attempts

    def sandbox_mounts(self) -> tuple[Mount, ...]:
        return ()

    async def launch(self, task: Task, sandbox: Sandbox, tools: ToolSet | None = None) -> AnswerRun:
        return AnswerRun(task, sandbox, tools, self.attempts)
