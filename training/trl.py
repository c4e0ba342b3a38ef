"""TRL's `GRPOTrainer` on polar envs, through its `rollout_func` (TRL 1.16): every completion is one episode.

`PolarRollout` is a `rollout_func`. TRL hands it the prompts of a generation batch (each dataset prompt repeated
`num_generations` times, so a GRPO group is `num_generations` episodes of one task) and the trainer. For each
prompt it runs the episode of the dataset row the prompt came from, with the trainer's own model as the policy
(sampled in-process with a KV cache; exact token ids and logprobs), and returns TRL's keys: `prompt_ids`,
`completion_ids`, `logprobs`, and `env_mask` (TRL's name for the loss mask: 1 = sampled by the model, 0 =
tokens the env added between calls), with the same prompts and budgets as the verl backend
(`polar.training.rollout`; the budget is `max_completion_length`).
The extra `reward`, `reward_components`, `episode_id`, `status` and `chains` lists reach the reward functions;
`env_reward` returns `reward` and logs the mean of each component (`polar/<component>`) and of `chains`.

One completion per episode: TRL 1.16 takes exactly `num_generations` completions per prompt and groups them by
position for the advantage (`rewards.view(-1, num_generations)`), so a rollout cannot hand it an episode's k
chains as k samples (verl's v1 trainer can: see `polar.training.verl.agent_loop`). The completion is the
episode's first chain; `chains` says how many it had (1 on append-only harnesses, where the prompt builder keeps
episodes whole), and every chain of the same traces is in `polar train export --format trl`.

No vLLM is needed: with `use_vllm=False` TRL calls `rollout_func` as is, so on a CPU the trainer's model
generates in-process (with `use_vllm=True` too, this rollout samples from the trainer's model, not vLLM).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from polar.errors import PolarError
from polar.evaluation.local_policy import MODEL_NAME, LoadedModel, LocalPolicy
from polar.training.rollout import Budget, Generation, Rollout, run_episode, stop_ids
from polar.training.verl.data import EpisodeSpec


def prompt_key(prompt: Any) -> str:
    """What identifies a row's prompt: the text of its last message (the task's instruction)."""
    if isinstance(prompt, list):
        prompt = prompt[-1]["content"] if prompt else ""
    return str(prompt)


class PolarRollout:
    """A TRL `rollout_func` that runs polar episodes; one per prompt it is given."""

    def __init__(self, rows: list[dict], tokenizer: Any, *, model_name: str = MODEL_NAME,
                 max_prompt_length: int = 4096, policy: str = "trl",
                 on_episode: Callable[[Rollout], None] | None = None):
        """
        Args:
            rows: dataset rows from `polar.training.verl.data.dataset_rows` (the train dataset is made of them).
            tokenizer: the trained model's tokenizer (prompts are rendered with its chat template).
            model_name: the model name recorded in the traces (the tokenizer's chat template renders prompts).
            max_prompt_length: longest first prompt; a longer one is left-truncated before sampling.
            policy: the policy name recorded in traces.
            on_episode: called with each finished episode (its trace, its sample), e.g. to save the traces.
        """
        self.specs: dict[str, EpisodeSpec] = {}
        for index, row in enumerate(rows):
            key = prompt_key(row["prompt"])
            spec = EpisodeSpec.from_row(row["extra_info"], f"row {index}")
            if self.specs.setdefault(key, spec) != spec:
                raise PolarError(f"row {index}: two rows have the same prompt but different episodes; TRL passes "
                                 "only the prompt to rollout_func, so each row needs its own")
        self.tokenizer, self.model_name, self.policy = tokenizer, model_name, policy
        self.max_prompt_length, self.on_episode = max_prompt_length, on_episode

    def __call__(self, prompts: list, trainer: Any) -> dict[str, list]:
        specs = []
        for prompt in prompts:
            if (spec := self.specs.get(prompt_key(prompt))) is None:
                raise PolarError("rollout_func got a prompt that is in none of its rows; build the train dataset "
                                 "with polar.training.trl.dataset(rows) from the same rows")
            specs.append(spec)
        model = trainer.accelerator.unwrap_model(trainer.model)
        lm = LoadedModel(self.tokenizer, model, stop_ids(self.tokenizer),
                         frozenset(inspect.signature(model.forward).parameters))
        # LocalPolicy's sampler (KV cache, temperature, top-p, exact logprobs) over the trained model; the model
        # path only tells it not to look for the GGUF, which it never loads here
        sampler = LocalPolicy(temperature=trainer.args.temperature, top_p=trainer.args.top_p,
                              model_path=Path(getattr(model, "name_or_path", "") or "."))
        budget = Budget(self.max_prompt_length, trainer.args.max_completion_length)
        was_training = model.training
        model.eval()
        try:
            rollouts = asyncio.run(self._run(specs, lm, sampler, budget))
        finally:
            model.train(was_training)
        for rollout in rollouts if self.on_episode else ():
            self.on_episode(rollout)
        return self._output(rollouts)

    async def _run(self, specs: list[EpisodeSpec], lm: LoadedModel, sampler: LocalPolicy,
                   budget: Budget) -> list[Rollout]:
        import torch

        lock = asyncio.Lock()  # one forward pass at a time: the episodes overlap only in env time
        generator = torch.Generator().manual_seed(int(torch.randint(2**31, ())))  # follows TRL's seed

        async def generate(prompt_ids: list[int], max_tokens: int) -> Generation:
            async with lock:
                ids, logprobs, _ = await asyncio.get_running_loop().run_in_executor(
                    None, sampler.sample_tokens, lm, prompt_ids, max_tokens, generator)
            return Generation(ids, logprobs)

        return list(await asyncio.gather(*(
            run_episode(spec, generate, self.tokenizer, model=self.model_name, budget=budget, policy=self.policy)
            for spec in specs
        )))

    def _output(self, rollouts: list[Rollout]) -> dict[str, list]:
        out: dict[str, list] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask", "reward",
                                                "reward_components", "episode_id", "status", "chains")}
        eos = self.tokenizer.eos_token_id
        for rollout in rollouts:
            sample = rollout.samples[0]
            empty = not sample.response_ids  # no call sampled anything: one unsampled eos, mask 0 (TRL needs a token)
            out["prompt_ids"].append(sample.prompt_ids or [eos])
            out["completion_ids"].append([eos] if empty else sample.response_ids)
            out["logprobs"].append([0.0] if empty else sample.logprobs)
            out["env_mask"].append([0] if empty else sample.loss_mask)
            out["reward"].append(rollout.trace.reward)
            out["reward_components"].append(dict(rollout.trace.reward_components))
            out["episode_id"].append(rollout.trace.episode_id)
            out["status"].append(rollout.trace.status)
            out["chains"].append(len(rollout.samples))
        return out


def env_reward(completions: list, reward: list[float], reward_components: list[dict] | None = None,
               log_metric: Callable[[str, float], None] | None = None, chains: list[int] | None = None,
               **kwargs: Any) -> list[float]:
    """The episode's reward (the env's capped sum of its components), as a TRL reward function."""
    if log_metric is not None and reward_components:
        for name in reward_components[0]:
            log_metric(f"polar/{name}", sum(c.get(name, 0.0) for c in reward_components) / len(reward_components))
    if log_metric is not None and chains:
        log_metric("polar/chains", sum(chains) / len(chains))
    return [float(r) for r in reward]


def dataset(rows: list[dict]) -> Any:
    """The TRL train dataset of the rows: a `prompt` column (chat messages) and the task id."""
    from datasets import Dataset

    return Dataset.from_list([{"prompt": row["prompt"], "task_id": row["extra_info"]["task_id"]} for row in rows])


def grpo_trainer(model: Any, tokenizer: Any, rows: list[dict], args: Any, *, reward_funcs: tuple = (),
                 **rollout: Any) -> Any:
    """A `GRPOTrainer` over the rows' episodes, rewarded by `env_reward` plus any `reward_funcs`.

    `rollout` holds `PolarRollout`'s keyword arguments (`model_name`, `max_prompt_length`, `on_episode`, ...).
    """
    from trl import GRPOTrainer

    return GRPOTrainer(model=model, reward_funcs=[env_reward, *reward_funcs], args=args, train_dataset=dataset(rows),
                       processing_class=tokenizer, rollout_func=PolarRollout(rows, tokenizer, **rollout))
