"""`TokenOracle`: the oracle's replies as a token-level behaviour policy, for token tests and benchmarks.

It answers each call with the oracle's tool calls (`polar.policies.OraclePolicy`, which replays the
reference solution through the harness's own tools) written as the tokens a model would sample,
`<tool_call>{...}</tool_call><|im_end|>` (optionally after a `<think>` block), each with logprob 0.0: probability 1
under this policy. Through any harness it gives multi-turn traces with real tool calls and real tool output,
which the tiny sampled replies of SmolLM2 rarely make; its prompts come from a `PromptBuilder`, as every
policy's do.
"""

from __future__ import annotations

from typing import Any

from polar.policies import OraclePolicy, assistant_turns
from polar.policies.local_policy import MODEL_NAME, parse_tool_calls
from polar.policies.prompting import PromptBuilder, plain_turns
from polar.protocols import Task
from polar.types import ModelReply, ModelRequest


class TokenOracle:
    name, model = "token-oracle", MODEL_NAME

    LOOK = "ls -la && head -c 3000 *.py"

    def __init__(self, tokenizer: Any, *, reasoning: str | None = None, look: int = 0) -> None:
        """`reasoning`: text to put in a `<think>` block before every reply (what reasoning-dropping templates
        leave out when they re-render the history). `look`: calls that first inspect the workspace (`LOOK`,
        through the harness's shell tool) before the solution, for episodes as long as an agent's."""
        self.tokenizer, self.reasoning, self.look = tokenizer, reasoning, look
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.builder = PromptBuilder(tokenizer)
        self.oracle = OraclePolicy()

    def __call__(self, request: ModelRequest, task: Task) -> ModelReply:
        prompt = self.builder.prompt(request)
        turn = assistant_turns(request)
        if turn < self.look:
            action = self.oracle._run(request, self.LOOK, turn)  # the oracle's way to its shell tool
        else:  # the oracle counts its steps by the replies in the history: leave the looks out of its count
            looks = [i for i, m in enumerate(request.messages) if m.get("role") == "assistant"][: self.look]
            kept = [m for i, m in enumerate(request.messages) if i not in looks]
            action = self.oracle(request.model_copy(update={"messages": kept}), task)
        text = plain_turns([action.to_openai_message()])[0]["content"]
        if self.reasoning:
            text = f"<think>\n{self.reasoning}\n</think>\n{text}"
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.end]
        content, calls = parse_tool_calls(text)
        reply = ModelReply(content=content, tool_calls=calls, token_ids=ids, logprobs=[0.0] * len(ids),
                           prompt_token_ids=prompt.ids, chain_break=prompt.chain_break, model=self.model,
                           finish_reason="tool_calls" if calls else "stop")
        self.builder.record(request, prompt.ids, reply)
        return reply
