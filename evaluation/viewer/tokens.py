"""The token view: an episode's prefix-merge chains as a trainer gets them (`polar.policies.samples.prefix_merge`).

Each chain is one training sample: its prompt, then the tokens the policy sampled (mask 1, with their logprobs)
and those the environment added between calls (mask 0). Where a call did not extend its chain, a new chain
starts; the page says why: the reason the builder or the policy recorded (`Sample.chain_break`,
`ModelReply.chain_break`), and where the prompt stopped matching. The page's script draws a chain only when it
is opened, so a long episode loads fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from polar.trace import Trace


@dataclass
class TokenView:
    """What the page shows: chains for its script (None when there are none) and a sentence about them."""

    note: str
    chains: list[dict[str, Any]] | None = None
    vocab: dict[int, str] | None = field(default=None)
    """Each token id's text, when a tokenizer was given; without one the page shows the ids."""


def _divergence(before: list[int], prompt: list[int]) -> str:
    """Where a call's prompt stopped extending the chain before it."""
    common = next((i for i, (a, b) in enumerate(zip(before, prompt, strict=False)) if a != b),
                  min(len(before), len(prompt)))
    if common == len(prompt) < len(before):
        return f"its prompt ({len(prompt)} tokens) is shorter than the chain so far ({len(before)} tokens)"
    return f"its prompt differs from the chain so far at token {common} of {len(before)}"


def _reason(sample: Any, first: Any, before: list[int]) -> str:
    """Why `sample` starts a new chain: the reason the builder gave it (`Sample.chain_break`) or the policy
    recorded (`reply.chain_break`), read where present, and where its prompt stopped matching the chain."""
    recorded = getattr(sample, "chain_break", None) or getattr(first.reply, "chain_break", None)
    extends = sample.prompt_ids[: len(before)] == before
    reasons = [str(recorded) if recorded else "", "" if extends else _divergence(before, sample.prompt_ids)]
    return "; ".join(r for r in reasons if r) or "a new chain"


def token_view(trace: Trace, tokenizer: Any | None = None) -> TokenView:
    """The chains of `trace` with their masks, logprobs and breaks, or a note saying why there are none."""
    from polar.policies.samples import SampleError, prefix_merge

    replies = [turn.reply for turn in trace.turns]
    if not any(r.token_ids for r in replies):
        return TokenView("no token ids: the policy did not record what it sampled")
    if tokenizer is None and any(r.prompt_token_ids is None for r in replies):
        return TokenView("the policy did not record its prompt tokens; give a tokenizer to render them "
                         "(`polar view --tokenizer local` for the embedded model)")
    try:
        samples = prefix_merge(trace, tokenizer)
    except SampleError as e:
        return TokenView(f"no chains: {e}")
    turns = {turn.index: turn for turn in trace.turns}
    chains = []
    before: list[int] = []
    for sample in samples:
        chains.append({
            "turns": sample.turns,
            "prompt": sample.prompt_ids,
            "response": sample.response_ids,
            "mask": "".join(map(str, sample.loss_mask)),
            "logprobs": [round(lp, 4) for lp in sample.logprobs],
            "break": _reason(sample, turns[sample.turns[0]], before) if chains else None,
        })
        before = sample.prompt_ids + sample.response_ids
    vocab = None
    if tokenizer is not None:
        ids = {i for c in chains for i in (*c["prompt"], *c["response"])}
        vocab = {i: tokenizer.decode([i]) for i in sorted(ids)}
    breaks = len(chains) - 1
    return TokenView(f"{len(chains)} chain(s) over {len(trace.turns)} call(s), {breaks} break(s)", chains, vocab)
