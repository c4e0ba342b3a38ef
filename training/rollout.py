"""One polar episode driven by a token-in/token-out sampler: the loop the verl agent loop and TRL share.

Every model call of the episode goes: the observation (the harness's request) becomes prompt ids through the
episode's `PromptBuilder` (the previous prompt + the sampled ids + only the new messages rendered with the
model's chat template and the request's tools; a full render, with the reason recorded, only when the history
changed); the sampler turns those ids into token ids and logprobs; they are decoded, tool calls are parsed
(`<tool_call>{...}</tool_call>`, Hermes style, what SmolLM2's and Qwen's templates use), and the env gets a
`ModelReply` carrying the exact `token_ids`, `logprobs`, `prompt_token_ids` and `chain_break`. At the end the
trace becomes training sequences with `prefix_merge`: one per chain, every chain trained, each with the
episode's reward.

Budgets: every chain must fit the trainer's sequence. A chain's first prompt is left-truncated to
`prompt_length` before sampling (as verl's own loops do, so the policy conditions on what is trained), and each
call in the chain samples at most what is left of `response_length` (sampled and in-between tokens together).
A call with no room left truncates the episode there (status `truncated`, through the env's `max_tokens` cap),
and the sandbox is graded as it stands.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from polar.envs.wrapper import async_env
from polar.policies.local_policy import parse_tool_calls, stop_texts
from polar.policies.prompting import PromptBuilder
from polar.policies.samples import Sample, prefix_merge
from polar.trace import Trace
from polar.training.verl.data import EpisodeSpec
from polar.types import ModelReply, ModelRequest

STOP_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>")


@dataclass
class Generation:
    """What a sampler returns for one prompt: the sampled ids and the logprob of each."""

    token_ids: list[int]
    logprobs: list[float]
    stopped: bool = False
    """The engine ended it on a stop (a stop token, or one of the request's stop texts, kept in the ids), not on the
    budget."""


Generate = Callable[[list[int], int, "list[int] | None", tuple[str, ...]], Awaitable[Generation]]
"""`await generate(prompt_ids, max_tokens, extends, stop)`: sample at most `max_tokens` tokens after `prompt_ids`.
`extends` is the previous call's prompt + sampled ids when this prompt continues them (None at a chain's first
call): an engine that holds that call's KV cache feeds only the new tokens; one with a prefix cache of its own
(vLLM, SGLang) needs no hint. `stop`: the request's stop texts (the answer harness ends a reply where its code block
closes); an engine that honours them ends the reply with the text and sets `stopped`, one that does not samples on
to a stop token, which costs tokens but changes no grade."""


@dataclass(frozen=True)
class Budget:
    prompt_length: int
    """Longest first prompt of a chain; a longer one is left-truncated before sampling."""
    response_length: int
    """Longest trained response: one chain's sampled and in-between tokens together."""


@dataclass
class Rollout:
    """An episode as the trainer sees it: the trace, and every chain of it as a sample."""

    trace: Trace
    samples: list[Sample]
    """The prefix-merge chains in order, each ending with its last sampled token (trailing env tokens dropped);
    chains that sampled nothing are left out, but an episode always has at least one sample (its reward must
    reach the trainer's group)."""
    generate_s: float
    """Seconds spent waiting on the sampler."""
    env_s: float
    """Seconds spent in the env (reset, harness, tools, grading)."""


def stop_ids(tokenizer: Any) -> frozenset[int]:
    """The ids that end a reply: the tokenizer's eos and the chat templates' end-of-turn tokens it knows."""
    vocab = tokenizer.get_vocab()
    ids = {tokenizer.eos_token_id, *(vocab[t] for t in STOP_TOKENS if t in vocab)}
    return frozenset(i for i in ids if i is not None)


def reply_from_tokens(tokenizer: Any, stops: frozenset[int], prompt: list[int], generation: Generation,
                      model: str) -> ModelReply:
    """The `ModelReply` for sampled tokens: decoded text (stop token left out), tool calls parsed."""
    ids = list(generation.token_ids)
    if len(generation.logprobs) != len(ids):
        raise ValueError(f"the sampler returned {len(ids)} token ids but {len(generation.logprobs)} logprobs")
    ends_on_token = bool(ids) and ids[-1] in stops
    finish = "stop" if generation.stopped or ends_on_token else "length"
    content, calls = parse_tool_calls(tokenizer.decode(ids[:-1] if ends_on_token else ids, skip_special_tokens=False))
    return ModelReply(content=content, tool_calls=calls, finish_reason="tool_calls" if calls and finish == "stop"
                      else finish, token_ids=ids, logprobs=list(generation.logprobs), prompt_token_ids=list(prompt),
                      model=model)


def _asked(request: ModelRequest) -> int | None:
    value = request.params.get("max_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _without_env_tail(sample: Sample) -> Sample:
    end = len(sample.loss_mask)
    while end and sample.loss_mask[end - 1] == 0:
        end -= 1
    return replace(sample, response_ids=sample.response_ids[:end], loss_mask=sample.loss_mask[:end],
                   logprobs=sample.logprobs[:end])


def trained_samples(trace: Trace, tokenizer: Any) -> list[Sample]:
    """Every chain of the trace that sampled something, trimmed to its last sampled token (at least one)."""
    chains = [_without_env_tail(s) for s in prefix_merge(trace, tokenizer)]
    return [s for s in chains if any(s.loss_mask)] or chains[:1]


def make_env(spec: EpisodeSpec) -> Any:
    """The env a spec names, as `gym.make` makes it, with its turn and time budgets."""
    import gymnasium as gym

    from polar.envs.registration import register_envs

    register_envs()
    env = gym.make(spec.env_id, harness=spec.harness, sandbox=spec.sandbox, suite=spec.suite,
                   max_turns=spec.max_turns, time_limit_s=spec.time_limit_s)
    return env


def remote_envs(address: str | bool) -> Callable[[EpisodeSpec], Any]:
    """A `make` for `run_episode` that opens each episode's env on a Ray node worker (`RemoteEnvPool`, one per
    process), so sandboxes and harnesses run on the cluster's nodes and only the sampling stays here. `address`:
    True for the cluster this process is in (verl's workers are Ray actors), else HEAD:6379."""
    import functools

    from polar.evaluation.ray_worker import RemoteEnvPool

    pool = RemoteEnvPool.shared(address)
    return lambda spec: pool.make(functools.partial(make_env, spec))


async def run_episode(spec: EpisodeSpec, generate: Generate, tokenizer: Any, *, model: str, budget: Budget,
                      policy: str, make: Callable[[EpisodeSpec], Any] = make_env) -> Rollout:
    """Run the episode `spec` names with `generate` as the policy; the env is made (by `make`: in this process,
    or a `RemoteEnv` on a Ray node) and closed here.

    `model` names the model recorded in the replies; `tokenizer`'s chat template renders the prompts (one
    `PromptBuilder` per episode); `policy` is recorded in the trace.
    """
    loop = asyncio.get_running_loop()
    stops = stop_ids(tokenizer)
    builder = PromptBuilder(tokenizer, capacity=64)
    env = await loop.run_in_executor(None, make, spec)
    api = async_env(env)
    started, generate_s = time.monotonic(), 0.0
    try:
        seed = spec.seed * 2**20 + secrets.randbelow(2**20)
        obs, info = await api.areset(seed=seed, options={"task_id": spec.task_id,
                                                         "policy": {"name": policy, "model": model}})
        chain: list[int] | None = None  # the current chain so far (prompt + appended)
        chain_prompt = sampled = 0  # the length of the current chain's first prompt; tokens sampled
        while True:
            if not obs.messages:  # the harness exited before calling the model: nothing to sample
                reply = ModelReply(content="", finish_reason="stop", token_ids=[], logprobs=[], prompt_token_ids=[],
                                   model=model)
            else:
                built = await loop.run_in_executor(None, builder.prompt, obs)
                prompt = built.ids
                in_chain = chain is not None and built.chain_break is None and prompt[: len(chain)] == chain
                if not in_chain:
                    prompt = prompt[-budget.prompt_length:]
                    chain_prompt = len(prompt)
                limit = budget.response_length - (len(prompt) - chain_prompt)
                limit = min(limit, _asked(obs) or limit)
                if limit < 1:  # no room to sample: truncate the episode here and grade it
                    env.set_wrapper_attr("max_tokens", sampled)
                    reply = ModelReply(content="", finish_reason="length", token_ids=[], logprobs=[],
                                       prompt_token_ids=prompt, chain_break=built.chain_break, model=model)
                else:
                    t0 = time.monotonic()
                    generation = await generate(prompt, limit, chain if in_chain else None, stop_texts(obs))
                    generate_s += time.monotonic() - t0
                    reply = reply_from_tokens(tokenizer, stops, prompt, generation, model)
                    reply.chain_break = built.chain_break
                    builder.record(obs, prompt, reply)
                    sampled += len(generation.token_ids)
                    chain = prompt + list(generation.token_ids)
            obs, _, terminated, truncated, info = await api.astep(reply)
            if terminated or truncated:
                break
    finally:
        await loop.run_in_executor(None, env.close)
    trace: Trace = info["trace"]
    return Rollout(trace=trace, samples=trained_samples(trace, tokenizer), generate_s=generate_s,
                   env_s=time.monotonic() - started - generate_s)
