"""Traces to training samples: `per_turn` (one sample per model call) and `prefix_merge` (chains of calls).

Every builder reads the token ids and logprobs the policy recorded (`reply.token_ids`, `reply.logprobs`) and
never re-tokenizes what the model said. The prompt of a call is what the policy conditioned on
(`reply.prompt_token_ids`, built by `polar.policies.prompting.PromptBuilder` so that it extends the previous
call's prompt + sampled ids whenever the history does), or, when a policy did not report it, the model's own
chat template rendered over the request (`canonical_prompt_ids`).

Chains: a call joins the chain of the call before it unless its reply records a chain break
(`reply.chain_break`: the history changed) or its prompt does not extend the chain token for token; a new chain
says why it started (`Sample.chain_break`). Every chain is a sample: the trainers take them all.

Invariant of both builders: every token with `loss_mask == 1` is a token the behaviour policy sampled, in
the order it sampled them, and its logprob is the one it recorded. Everything else (tool results, user turns,
template glue) has mask 0 and logprob 0.0.

Reward: a trace has one outcome reward; every sample of an episode carries the episode's `trace.reward`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from polar.errors import PolarError
from polar.policies.local_policy import MODEL_NAME as LOCAL_MODEL
from polar.policies.long_model import LONG_MODEL_NAME
from polar.policies.prompting import render_prompt
from polar.trace import Trace, Turn
from polar.types import ModelRequest

RECORDING_POLICIES = (
    "`--policy local` (the embedded SmolLM2), or `--policy openai` against a server that returns token ids "
    "and logprobs, such as vLLM"
)


class SampleError(PolarError, ValueError):
    """A trace cannot become training samples: it lacks token ids, or its prompt cannot be rendered."""


@dataclass
class Sample:
    """One training sequence: `prompt_ids` is context, `response_ids` is trained where `loss_mask` is 1."""

    prompt_ids: list[int]
    response_ids: list[int]
    loss_mask: list[int]
    """Same length as `response_ids`: 1 for a token the policy sampled, 0 for one the environment added."""
    logprobs: list[float]
    """Same length as `response_ids`: the behaviour policy's logprob of each sampled token, 0.0 where mask is 0."""
    episode_id: str
    turns: list[int]
    """The indices of the trace turns (model calls) this sample covers, in order."""
    reward: float
    """The episode's reward (`trace.reward`), the same on every sample of the episode."""
    chain_break: str | None = None
    """Why this chain started (`category: detail`); None for an episode's first chain and for `per_turn`."""


def canonical_prompt_ids(tokenizer: Any, request: ModelRequest, model: str) -> list[int]:
    """The prompt tokens `model` would see for `request`: its own chat template, with the request's tools.

    For the local policy's models (SmolLM2, and the long-context test model with its tokenizer) this is exactly
    `render_prompt`, the full render `LocalPolicy` falls back to (SmolLM2's template knows no tools, so they are
    described in the system turn). Any other model's template must render the tools itself; a template that
    cannot raises `SampleError` naming the model.
    """
    if model in (LOCAL_MODEL, LONG_MODEL_NAME):
        return render_prompt(tokenizer, request)
    template = tokenizer.chat_template or ""
    if request.tools and "tools" not in template:
        raise SampleError(
            f"the chat template of {model} cannot render the request's {len(request.tools)} tool(s) "
            f"({', '.join(request.tool_names())}); record the prompt tokens instead (reply.prompt_token_ids) "
            "or use a tokenizer whose template takes `tools`"
        )
    try:
        text = tokenizer.apply_chat_template(
            request.messages, tools=request.tools or None, tokenize=False, add_generation_prompt=True
        )
    except Exception as e:  # jinja raises anything a template author chose to raise
        raise SampleError(f"the chat template of {model} cannot render this request: {e}") from e
    return tokenizer.encode(text, add_special_tokens=False)


def _check_ids(trace: Trace) -> None:
    for turn in trace.turns:
        reply = turn.reply
        if reply.token_ids is None or reply.logprobs is None:
            raise SampleError(
                f"episode {trace.episode_id}: turn {turn.index} has no sampled token ids and logprobs, so it "
                f"cannot become a training sample (policy {trace.policy.name if trace.policy else 'unknown'}); "
                f"policies that record them: {RECORDING_POLICIES}"
            )
        if len(reply.logprobs) != len(reply.token_ids):
            raise SampleError(
                f"episode {trace.episode_id}: turn {turn.index} has {len(reply.token_ids)} token ids but "
                f"{len(reply.logprobs)} logprobs"
            )


def _prompt(trace: Trace, position: int, tokenizer: Any) -> list[int]:
    """What the policy conditioned on at this call: its recorded prompt, else the canonical render."""
    turn = trace.turns[position]
    if turn.reply.prompt_token_ids is not None:
        return list(turn.reply.prompt_token_ids)
    model = turn.reply.model or (trace.policy.model if trace.policy else None) or "the unnamed model"
    try:
        return canonical_prompt_ids(tokenizer, turn.request, model)
    except SampleError as e:
        raise SampleError(f"episode {trace.episode_id}, turn {turn.index}: {e}") from e


def per_turn(trace: Trace, tokenizer: Any) -> list[Sample]:
    """One sample per model call: its prompt, and the tokens it sampled, all trained (mask 1)."""
    _check_ids(trace)
    samples = []
    for position, turn in enumerate(trace.turns):
        ids = list(turn.reply.token_ids or [])
        samples.append(
            Sample(
                prompt_ids=_prompt(trace, position, tokenizer),
                response_ids=ids,
                loss_mask=[1] * len(ids),
                logprobs=list(turn.reply.logprobs or []),
                episode_id=trace.episode_id,
                turns=[turn.index],
                reward=trace.reward,
            )
        )
    return samples


def _break(turn: Turn) -> str:
    """Why a call whose prompt does not extend the chain started a new one, when its reply did not say."""
    if not any(m.get("role") == "assistant" for m in turn.request.messages):
        return "new conversation: the request holds no earlier reply (a sub-agent, or the harness restarted)"
    return "tokens: the prompt does not extend the previous prompt + sampled ids (recorded without a reason)"


def prefix_merge(trace: Trace, tokenizer: Any) -> list[Sample]:
    """Chains of consecutive calls, each chain one sample; every call of the trace is in exactly one.

    A call joins the current chain when its reply records no chain break and its prompt tokens start with the
    chain's whole sequence so far (prompt + everything appended); the tokens between are added with mask 0, then
    its sampled tokens with mask 1. Otherwise (compaction, a sub-agent, a dropped or edited reply) it starts a new
    chain, whose `chain_break` says why: the reply's own record, else what the tokens and messages show.
    """
    _check_ids(trace)
    samples: list[Sample] = []
    sequence: list[int] = []  # the current chain's prompt + response so far
    for position, turn in enumerate(trace.turns):
        prompt = _prompt(trace, position, tokenizer)
        ids, logprobs = list(turn.reply.token_ids or []), list(turn.reply.logprobs or [])
        chain = samples[-1] if samples else None
        extends = len(prompt) >= len(sequence) and prompt[: len(sequence)] == sequence
        if chain is not None and turn.reply.chain_break is None and extends:
            gap = prompt[len(sequence):]
            chain.response_ids += gap + ids
            chain.loss_mask += [0] * len(gap) + [1] * len(ids)
            chain.logprobs += [0.0] * len(gap) + logprobs
            chain.turns.append(turn.index)
        else:
            why = None if chain is None else turn.reply.chain_break or _break(turn)
            samples.append(Sample(prompt, ids, [1] * len(ids), logprobs, trace.episode_id, [turn.index],
                                  trace.reward, why))
        sequence = prompt + ids
    return samples


@dataclass
class Coverage:
    """How traces chain under `prefix_merge`: what a trainer pays for them and why chains broke."""

    episodes: int = 0
    calls: int = 0
    joined: int = 0
    """Calls that joined the chain of the call before them."""
    chains: int = 0
    single_chain: int = 0
    """Episodes that are one chain."""
    breaks: Counter[str] = field(default_factory=Counter)
    """Chains after an episode's first, by the category of their break (the text before the first colon)."""

    def add(self, samples: list[Sample]) -> None:
        calls = sum(len(s.turns) for s in samples)
        self.episodes += 1
        self.calls += calls
        self.joined += calls - len(samples)
        self.chains += len(samples)
        self.single_chain += len(samples) == 1
        self.breaks.update((s.chain_break or "").split(":", 1)[0] for s in samples[1:])

    @property
    def merged(self) -> float:
        """The share of calls that had a call before them and joined its chain (0.0 when none had one)."""
        followers = self.calls - self.episodes
        return self.joined / followers if followers > 0 else 0.0


def coverage(traces: Iterable[Trace], tokenizer: Any) -> Coverage:
    """`prefix_merge` over every trace, counted (`SampleError` for a trace without token ids)."""
    total = Coverage()
    for trace in traces:
        if trace.turns:
            total.add(prefix_merge(trace, tokenizer))
    return total


def merge_coverage(traces: Iterable[Trace], tokenizer: Any) -> float:
    """The share of model calls, after each episode's first, that joined the chain of the call before them."""
    return coverage(traces, tokenizer).merged
