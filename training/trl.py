"""TRL's `GRPOTrainer` on polar envs, through its `rollout_func` (TRL 1.16): a prompt is an episode, a chain a row.

`PolarRollout` is a `rollout_func`. TRL hands it the prompts of a generation batch (each dataset prompt repeated
`num_generations` times, so a GRPO group is `num_generations` episodes of one task) and the trainer. For each
prompt it runs the episode of the dataset row the prompt came from, with the trainer's own model as the policy
(sampled in-process with a KV cache; exact token ids and logprobs), and returns TRL's keys: `prompt_ids`,
`completion_ids`, `logprobs`, and `env_mask` (TRL's name for the loss mask: 1 = sampled by the model, 0 =
tokens the env added between calls), with the same prompts and budgets as the verl backend
(`polar.training.rollout`; the budget is `max_completion_length`).
The extra `reward`, `reward_components`, `episode_id`, `status` and `chains` lists reach the reward functions;
`env_reward` returns `reward` and logs the mean of each component (`polar/<component>`) and of `chains`.

Every chain trained: TRL 1.16 takes exactly `num_generations` completions per prompt and groups them by position
for the advantage (`rewards.view(-1, num_generations)`, then `advantages[process_slice]` of `len(prompts)` rows),
so a rollout cannot return an episode's k chains as k rows. Nor can it pack them into one completion: TRL scores a
completion in one forward pass over prompt + completion, so a later chain would be conditioned on the earlier
chain's tokens and on its own re-rendered prompt after them, not on the prompt the policy saw, and its logprobs
(and the loss) would be of a context that never existed. So the rollout returns each episode's first chain as its
row (that row's reward is the episode's, and TRL computes the group's advantages over episodes), keeps the later
chains, and `PolarGRPOTrainer` (what `grpo_trainer` builds) appends them as extra rows after TRL has scored the
batch: each with its own prompt, its loss mask, its sampled logprobs, the advantage of its episode's row, and the
old/reference logprobs TRL would compute (the v1 rule of verl: every output of an episode gets the episode's
advantage). `chains` (logged as `polar/chains`) says how many an episode had.

No vLLM is needed: with `use_vllm=False` TRL calls `rollout_func` as is, so on a CPU the trainer's model
generates in-process (with `use_vllm=True` too, this rollout samples from the trainer's model, not vLLM).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from polar.errors import PolarError
from polar.policies.group_sampling import sample_batch
from polar.policies.local_policy import (
    MODEL_NAME,
    SAMPLING_THREADS,
    ChainCache,
    LoadedModel,
    LocalPolicy,
    torch_threads,
)
from polar.policies.samples import Sample
from polar.training.rollout import Budget, Generation, Rollout, make_env, remote_envs, run_episode, stop_ids
from polar.training.verl.data import EpisodeSpec

GATHER_S = 5.0
"""How long a GRPO group's first call waits for the group's other episodes to ask for the same prompt (their
sandboxes start at different speeds); a group whose episodes are all asking is sampled at once."""


def prompt_key(prompt: Any) -> str:
    """What identifies a row's prompt: the text of its last message (the task's instruction)."""
    if isinstance(prompt, list):
        prompt = prompt[-1]["content"] if prompt else ""
    return str(prompt)


class PolarRollout:
    """A TRL `rollout_func` that runs polar episodes; one per prompt it is given."""

    def __init__(self, rows: list[dict], tokenizer: Any, *, model_name: str = MODEL_NAME,
                 max_prompt_length: int = 4096, policy: str = "trl",
                 on_episode: Callable[[Rollout], None] | None = None, ray_envs: bool | str | None = None):
        """
        Args:
            rows: dataset rows from `polar.training.verl.data.dataset_rows` (the train dataset is made of them).
            tokenizer: the trained model's tokenizer (prompts are rendered with its chat template).
            model_name: the model name recorded in the traces (the tokenizer's chat template renders prompts).
            max_prompt_length: longest first prompt; a longer one is left-truncated before sampling.
            policy: the policy name recorded in traces.
            on_episode: called with each finished episode (its trace, its sample), e.g. to save the traces.
            ray_envs: run the episodes' envs on the node workers of a Ray cluster (an address, HEAD:6379; true:
                the cluster this process is in) instead of in this process; the trainer's model still samples here.
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
        self.make = remote_envs(ray_envs) if ray_envs else make_env
        self.later: list[list[Sample]] = []
        """The chains after the first of each row of the last call, which `PolarGRPOTrainer` appends as rows."""

    def __call__(self, prompts: list, trainer: Any) -> dict[str, list]:
        if not isinstance(trainer, trainer_class()):
            raise PolarError("PolarRollout needs a PolarGRPOTrainer, which trains every chain of an episode (a plain "
                             "GRPOTrainer would drop all but the first); build it with "
                             "polar.training.trl.grpo_trainer")
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
        # One sampler per call: the chains' KV caches it keeps (one per episode) hold this step's weights only
        sampler = LocalPolicy(temperature=trainer.args.temperature, top_p=trainer.args.top_p,
                              model_path=Path(getattr(model, "name_or_path", "") or "."),
                              chains=ChainCache(kept=len(specs)))
        budget = Budget(self.max_prompt_length, trainer.args.max_completion_length)
        was_training = model.training
        model.eval()
        try:
            with torch_threads(SAMPLING_THREADS):
                rollouts = asyncio.run(self._run(specs, lm, sampler, budget, trainer.args.num_generations))
        finally:
            model.train(was_training)
        for rollout in rollouts if self.on_episode else ():
            self.on_episode(rollout)
        return self._output(rollouts)

    async def _run(self, specs: list[EpisodeSpec], lm: LoadedModel, sampler: LocalPolicy,
                   budget: Budget, group: int) -> list[Rollout]:
        import torch

        loop = asyncio.get_running_loop()
        lock = asyncio.Lock()  # one forward pass at a time: the episodes overlap only in env time
        generator = torch.Generator().manual_seed(int(torch.randint(2**31, ())))  # follows TRL's seed
        waiting: dict[tuple, list[asyncio.Future]] = {}

        async def one(prompt_ids: list[int], max_tokens: int, extends: list[int] | None,
                      stop: tuple[str, ...]) -> Generation:
            async with lock:
                ids, logprobs, finish = await loop.run_in_executor(None, functools.partial(
                    sampler.sample_tokens, lm, prompt_ids, max_tokens, generator, extends, remember=True, stop=stop))
            return Generation(ids, logprobs, stopped=finish == "stop")

        async def generate(prompt_ids: list[int], max_tokens: int, extends: list[int] | None,
                           stop: tuple[str, ...]) -> Generation:
            """A call that starts a chain waits (up to GATHER_S) for the rest of its GRPO group to ask for the same
            prompt, and the group is sampled as one batch (`sample_batch`); a call that extends a chain goes
            alone, on its chain's KV cache."""
            if extends is not None or group < 2:
                return await one(prompt_ids, max_tokens, extends, stop)
            key = (tuple(prompt_ids), max_tokens, stop)
            future = loop.create_future()
            asking = waiting.setdefault(key, [])
            asking.append(future)
            deadline = loop.time() + GATHER_S
            while not future.done() and waiting.get(key) is asking and len(asking) < group \
                    and loop.time() < deadline:
                await asyncio.sleep(0.02)
            async with lock:
                if not future.done():
                    batch = waiting.pop(key)
                    sampled = await loop.run_in_executor(None, functools.partial(
                        sample_batch, sampler, lm, prompt_ids, max_tokens, len(batch), generator, stop))
                    for asked, (ids, logprobs, finish) in zip(batch, sampled, strict=True):
                        asked.set_result(Generation(ids, logprobs, stopped=finish == "stop"))
            return future.result()

        return list(await asyncio.gather(*(
            run_episode(spec, generate, self.tokenizer, model=self.model_name, budget=budget, policy=self.policy,
                        make=self.make)
            for spec in specs
        )))

    def _output(self, rollouts: list[Rollout]) -> dict[str, list]:
        out: dict[str, list] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask", "reward",
                                                "reward_components", "episode_id", "status", "chains")}
        eos = self.tokenizer.eos_token_id
        self.later = [rollout.samples[1:] for rollout in rollouts]
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


PADDED = {"prompt_ids": "left", "prompt_mask": "left", "completion_ids": "right", "completion_mask": "right",
          "tool_mask": "right", "sampling_per_token_logps": "right", "old_per_token_logps": "right",
          "ref_per_token_logps": "right"}
"""The per-token tensors of TRL's scored batch that `with_later_chains` extends, and the side TRL pads them on."""


def _padded(rows: list[list], width: int, value: float, side: str, like: Any) -> Any:
    """`rows` as one tensor of `width` columns, padded with `value` on `side`, with `like`'s dtype and device."""
    import torch

    out = torch.full((len(rows), width), value, dtype=like.dtype, device=like.device)
    for i, row in enumerate(rows):
        if row:
            target = out[i, width - len(row):] if side == "left" else out[i, : len(row)]
            target.copy_(torch.tensor(row, dtype=like.dtype))
    return out


def _widened(tensor: Any, width: int, value: float, side: str) -> Any:
    import torch.nn.functional as F

    extra = width - tensor.size(1)
    return F.pad(tensor, (extra, 0) if side == "left" else (0, extra), value=value)


def _logps(trainer: Any, key: str, ids: Any, mask: Any, width: int) -> Any:
    """TRL's old (`old_per_token_logps`: the trained model) or reference logprobs of the completion tokens."""
    import contextlib

    import torch
    from trl.models.utils import disable_gradient_checkpointing
    from trl.trainer.utils import use_adapter

    model, adapter = trainer.model, contextlib.nullcontext()
    if key == "ref_per_token_logps" and trainer.ref_model is not None:
        model = trainer.ref_model
    elif key == "ref_per_token_logps":  # a PEFT adapter: the reference is the model with it off (as TRL does)
        unwrapped = trainer.accelerator.unwrap_model(trainer.model)
        adapter = use_adapter(unwrapped, adapter_name="ref" if "ref" in unwrapped.peft_config else None)
    with torch.no_grad(), disable_gradient_checkpointing(trainer.model, trainer.args.gradient_checkpointing_kwargs), \
            adapter:
        return trainer._get_per_token_logps_and_entropies(model, ids, mask, width,
                                                          batch_size=trainer.args.per_device_train_batch_size)[0]


def with_later_chains(trainer: Any, batch: dict[str, Any], later: list[list[Sample]]) -> dict[str, Any]:
    """TRL's scored batch (one row per episode: its first chain) with every later chain appended as a row.

    Each later chain gets its own prompt and completion, its loss mask (`tool_mask`), the logprobs its tokens were
    sampled with, the advantage of its episode's row, and the old and reference logprobs when TRL computed them
    for the batch; `num_items_in_batch` counts its trained tokens. Rows with no gradient (loss mask 0) are added
    when needed so the batch still splits into `steps_per_generation` equal parts. Every process makes the same
    collective call whether or not it has later chains.
    """
    import torch

    n = len(batch["advantages"])
    chains = [(row, sample) for row, samples in enumerate(later) for sample in samples]
    unknown = sorted(k for k, v in batch.items() if torch.is_tensor(v) and v.dim() == 2 and k not in PADDED)
    if chains and unknown:
        raise PolarError(f"PolarGRPOTrainer cannot add an episode's later chains to a batch with {unknown}; train "
                         "without them (use_vllm=False: this rollout samples from the trained model anyway)")
    split = trainer.args.steps_per_generation if trainer.model.training else 1
    fillers = -(n + len(chains)) % split if chains else 0
    trained = [1] * len(chains) + [0] * fillers
    chains += chains[-1:] * fillers
    prompts, completions = [s.prompt_ids for _, s in chains], [s.response_ids for _, s in chains]
    width = {"left": max([batch["prompt_ids"].size(1), *map(len, prompts)]),
             "right": max([batch["completion_ids"].size(1), *map(len, completions)])}
    pad = trainer._tokenizer.pad_token_id
    ends = {*trainer.eos_token_ids, pad}
    cut = [trainer.mask_truncated_completions and c[-1] not in ends for c in completions]  # as TRL does to its rows
    rows = {"prompt_ids": (prompts, pad), "prompt_mask": ([[1] * len(p) for p in prompts], 0),
            "completion_ids": (completions, pad),
            "completion_mask": ([[0 if x else 1] * len(c) for c, x in zip(completions, cut, strict=True)], 0),
            "tool_mask": ([[m * t for m in s.loss_mask] for (_, s), t in zip(chains, trained, strict=True)], 1),
            "sampling_per_token_logps": ([s.logprobs for _, s in chains], 0.0)}
    out = dict(batch)
    for key, (values, value) in rows.items():
        if key in batch:
            side = PADDED[key]
            out[key] = torch.cat([_widened(batch[key], width[side], value, side),
                                  _padded(values, width[side], value, side, batch[key])])
    ids = torch.cat([out["prompt_ids"][n:], out["completion_ids"][n:]], 1)
    mask = torch.cat([out["prompt_mask"][n:], out["completion_mask"][n:]], 1)
    for key in ("old_per_token_logps", "ref_per_token_logps"):
        if key in batch:
            new = (_logps(trainer, key, ids, mask, width["right"]) if chains
                   else batch[key].new_zeros((0, width["right"])))
            out[key] = torch.cat([_widened(batch[key], width["right"], 0.0, "right"), new])
    rows_of = torch.tensor([row for row, _ in chains], dtype=torch.long, device=batch["advantages"].device)
    out["advantages"] = torch.cat([batch["advantages"], batch["advantages"][rows_of]])
    trained_tokens = (out["completion_mask"][n:] * out["tool_mask"][n:]).sum()
    out["num_items_in_batch"] = batch["num_items_in_batch"] + trainer.accelerator.gather(trained_tokens).sum()
    return out


LOGP_DIFF = "sampling/sampling_logp_difference/"
"""The metrics (TRL's names for them under vLLM) of the sampler's logprobs against the trainer's: `mean` and `max`."""


def sampler_logp_difference(trainer: Any, batch: dict[str, Any]) -> tuple[float, float] | None:
    """Mean and max of |the logprob each trained token was sampled with - the trainer's, recomputed on the same
    tokens|; None when the batch holds no sampled logprobs. The trainer's are TRL's old logprobs where it computed
    them, else one forward pass of the batch under the weights that sampled it."""
    import torch

    sampled = batch.get("sampling_per_token_logps")
    if sampled is None:
        return None
    trained = batch.get("old_per_token_logps")
    if trained is None:
        ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], 1)
        mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], 1)
        trained = _logps(trainer, "old_per_token_logps", ids, mask, batch["completion_ids"].size(1))
    keep = batch["completion_mask"].bool()
    if "tool_mask" in batch:
        keep &= batch["tool_mask"].bool()
    delta = (trained - sampled).abs()[keep]
    delta = delta[~torch.isnan(delta)]
    return (float(delta.mean()), float(delta.max())) if delta.numel() else None


@functools.cache
def trainer_class() -> type:
    """`PolarGRPOTrainer`: TRL's `GRPOTrainer` that trains every chain of an episode (see the module docstring)."""
    from trl import GRPOTrainer

    class PolarGRPOTrainer(GRPOTrainer):
        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
            batch = with_later_chains(self, super()._generate_and_score_completions(inputs), self.rollout_func.later)
            if self.model.training and (diff := sampler_logp_difference(self, batch)) is not None:
                self._metrics["train"][LOGP_DIFF + "mean"].append(diff[0])
                self._metrics["train"][LOGP_DIFF + "max"].append(diff[1])
            return batch

    return PolarGRPOTrainer


def grpo_trainer(model: Any, tokenizer: Any, rows: list[dict], args: Any, *, reward_funcs: tuple = (),
                 **rollout: Any) -> Any:
    """A `PolarGRPOTrainer` over the rows' episodes (every chain trained), rewarded by `env_reward` plus any
    `reward_funcs`.

    `rollout` holds `PolarRollout`'s keyword arguments (`model_name`, `max_prompt_length`, `on_episode`, ...).
    """
    return trainer_class()(model=model, reward_funcs=[env_reward, *reward_funcs], args=args,
                           train_dataset=dataset(rows), processing_class=tokenizer,
                           rollout_func=PolarRollout(rows, tokenizer, **rollout))
