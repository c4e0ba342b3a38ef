"""`sample_group`: n replies of the local model to one request, sampled as one batch.

Why: a GRPO group and the k samples of an eval are n replies to the same prompt. Sampled one by one, each feeds the
prompt again and each step moves one token through the model; as a batch, the prompt is fed once (its KV cache is
repeated n times), each step moves the unfinished replies' tokens through the model together, and a reply leaves the
batch when it ends. Every
reply is what `LocalPolicy` would return for the request (its exact token ids and logprobs, the same prompt ids and
sampling settings), so traces and training samples cannot tell the two apart.
"""

from __future__ import annotations

import threading
from typing import Any

from polar.policies.local_policy import LoadedModel, LocalPolicy, stop_texts
from polar.protocols import Task
from polar.types import ModelReply, ModelRequest


def sample_group(policy: LocalPolicy, request: ModelRequest, n: int) -> list[ModelReply]:
    """`n` replies to `request`, sampled together with `policy`'s model and settings; with `policy.seed` set, the
    same request gets the same group."""
    lm, built, budget = policy.prepare(request)
    generator = policy.generator(built.ids, salt="group:")
    return [policy.reply(lm, request, built, ids, lps, end)
            for ids, lps, end in sample_batch(policy, lm, built.ids, budget, n, generator, stop_texts(request))]


def sample_batch(policy: LocalPolicy, lm: LoadedModel, prompt: list[int], budget: int, n: int, generator: Any,
                 stop: tuple[str, ...] = ()) -> list[tuple[list[int], list[float], str]]:
    """`n` continuations of `prompt` (token ids), up to `budget` tokens each, sampled as one batch with `policy`'s
    sampling settings: each one's token ids, their logprobs and its finish reason, as `LocalPolicy.sample_tokens`
    returns them. Public for trainers that hold token ids (a GRPO group's first turn)."""
    import torch
    from transformers import DynamicCache

    if n < 1:
        raise ValueError(f"a group has at least one reply, got n={n}")
    cache = DynamicCache()
    kw: dict[str, Any] = {"cache" if "cache" in lm.forward_kw else "past_key_values": cache, "use_cache": True}
    if "logits_to_keep" in lm.forward_kw:
        kw["logits_to_keep"] = 1
    tokens: list[list[int]] = [[] for _ in range(n)]
    logprobs: list[list[float]] = [[] for _ in range(n)]
    finish = ["length"] * n
    with torch.inference_mode():
        logits = lm.model(input_ids=torch.tensor([prompt]), **kw).logits[:, -1].float()
        cache.batch_repeat_interleave(n)
        logits = logits.expand(n, -1)
        rows = list(range(n))  # the replies still sampling, in the batch's order
        for _ in range(budget):
            drawn, logprob = policy.draw(logits, generator)
            for i, token, lp in zip(rows, drawn.tolist(), logprob.tolist(), strict=True):
                tokens[i].append(token)
                logprobs[i].append(lp)
                if policy.ends(lm, tokens[i], stop):
                    finish[i] = "stop"
            going = [position for position, i in enumerate(rows) if finish[i] == "length"]
            if not going:
                break
            if len(going) < len(rows):  # a finished reply leaves the batch, so no step is spent on it
                cache.batch_select_indices(torch.tensor(going))
                rows, drawn = [rows[p] for p in going], drawn[going]
            logits = lm.model(input_ids=drawn[:, None], **kw).logits[:, -1].float()
    return list(zip(tokens, logprobs, finish, strict=True))


class GroupedPolicy:
    """A `LocalPolicy` that samples `group` replies at once for each request it has none left for, and hands them
    out one per call: `polar eval`'s k samples of a one-turn task (the answer harness) ask the same request k times,
    and get k independent samples from one batch. A request seen once (a later turn) still costs a group, so it
    pays only where requests repeat."""

    def __init__(self, policy: LocalPolicy, group: int):
        self.policy, self.group = policy, group
        self.name, self.model = policy.name, policy.model
        self._left: dict[str, list[ModelReply]] = {}
        self._lock = threading.Lock()

    def __call__(self, request: ModelRequest, task: Task | None = None) -> ModelReply:
        key = request.model_dump_json(include={"messages", "tools", "params"})
        with self._lock:  # one group at a time: the CPU has no room for two
            left = self._left.get(key)
            if not left:
                left = self._left[key] = sample_group(self.policy, request, self.group)
            reply = left.pop()
            if not left:
                del self._left[key]
        return reply
