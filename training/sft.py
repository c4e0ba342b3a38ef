"""A supervised warm start before GRPO: the suite's reference solutions, as the harness asks for them.

Why: GRPO learns only from groups whose episodes disagree, and a small model that fails most tasks in a harness's
format gives few of them. The oracle policy plays every task of the train suite through the env and harness
(`polar eval --policy oracle`), so each solved episode's last request is exactly the prompt the policy will be sent,
and its reply the reference solution written in the harness's format; a few epochs of next-token loss on those
replies (the prompt's tokens carry no loss) start GRPO from a policy that answers in the format. Only the train
suite's own tasks are seen.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from polar.errors import PolarError
from polar.trace import Trace
from polar.training.grpo_job import EpisodeSettings

DONE = "sft.json"
"""Written into the output folder last, with the settings and the losses: a folder without it is not a model."""


@dataclass(frozen=True)
class SftSettings(EpisodeSettings):
    """What one `polar train sft` run trains: its command-line options (`polar train sft --help`)."""

    epochs: int = 2
    lr: float = 5e-5
    batch: int = 4
    """Examples per optimizer step."""
    out: Path | None = Path("runs/sft")


def reference_traces(s: SftSettings) -> list[Trace]:
    """One oracle episode per task of the suite, through the env and harness (resumed from `out/oracle`); every one
    must be solved, since a reference that fails its own tests would teach a wrong answer."""
    import gymnasium as gym

    from polar.envs.registration import env_family, register_envs
    from polar.evaluation.evaluate import EvalRun, EvalSettings, run_eval, suite_hash
    from polar.policies import OraclePolicy

    register_envs()
    family = env_family(s.env_id)()
    tasks = family.load_tasks(s.suite)
    if s.tasks:
        chosen = s.tasks.split(",")
        unknown = sorted(set(chosen) - {t.id for t in tasks})
        if unknown:
            raise PolarError(f"--tasks {unknown} are not in the suite {s.suite or family.default_suite!r}")
        tasks = [t for t in tasks if t.id in chosen]
    settings = EvalSettings(env_id=s.env_id, harness=s.harness, sandbox="local", policy="oracle", model=None,
                            suite=s.suite, suite_hash=suite_hash(tasks), tasks=tuple(t.id for t in tasks), k=1, seed=0,
                            max_turns=s.max_turns, time_limit_s=300.0)
    run = EvalRun.open(s.out / "oracle", settings)
    make_env = functools.partial(gym.make, s.env_id, harness=s.harness, sandbox="local", suite=s.suite,
                                 max_turns=s.max_turns, time_limit_s=300.0)
    asyncio.run(run_eval(run, make_env, OraclePolicy(), jobs=4))
    traces = [trace for _, trace in sorted(run.done.items())]
    failed = [t.task_id for t in traces if not t.solved(family.reward.outcome)]
    if failed:
        raise PolarError(f"the reference solutions of {failed} do not solve their tasks through the {s.harness} "
                         f"harness (traces: {run.out}); fix those tasks or leave them out of the suite")
    return traces


def examples(traces: list[Trace], tokenizer: Any) -> list[tuple[list[int], list[int]]]:
    """(prompt ids, reply ids) of each trace's last call: the reply as the chat template closes an assistant turn,
    so the model also learns where to stop."""
    from polar.policies.prompting import render_prompt, render_text

    pairs = []
    for trace in traces:
        last = trace.turns[-1]
        prompt = render_prompt(tokenizer, last.request)
        whole = tokenizer.encode(render_text(tokenizer, [*last.request.messages, last.reply.to_openai_message()],
                                             last.request.tools, False), add_special_tokens=False)
        if whole[: len(prompt)] != prompt:
            raise PolarError(f"{trace.episode_id}: the chat template renders the reply's turn with another prefix "
                             "than the prompt, so the reply's tokens cannot be told apart")
        pairs.append((prompt, whole[len(prompt):]))
    return pairs


def warm_start(s: SftSettings) -> Path:
    """Fine-tune on the suite's reference replies and save the model in `s.out / "model"`; a folder already finished
    with the same settings is kept."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from polar.policies.local_policy import smollm2_dir

    folder = s.out / "model"
    settings = s.identity()
    if (folder / DONE).is_file() and json.loads((folder / DONE).read_text())["settings"] == settings:
        return folder
    source = Path(s.model or smollm2_dir())
    if not source.is_dir():
        raise PolarError(f"--model {source}: the warm start trains a model folder (a checkpoint, or the default); "
                         "leave --model out to start from SmolLM2")
    traces = reference_traces(s)
    # a copy of its own, not `load_model`'s: the process's shared model stays as it is
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(source, local_files_only=True)
    pairs = examples(traces, tokenizer)
    torch.manual_seed(s.seed)
    order = random.Random(s.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=0.0)
    model.train()
    losses, started = [], time.monotonic()
    for _ in range(s.epochs):
        shuffled = order.sample(pairs, len(pairs))
        for first in range(0, len(shuffled), s.batch):
            batch = shuffled[first:first + s.batch]
            tokens = sum(len(reply) for _, reply in batch)
            optimizer.zero_grad()
            total = 0.0
            for prompt, reply in batch:
                ids = torch.tensor([prompt + reply])
                labels = torch.tensor([[-100] * len(prompt) + reply])
                logits = model(input_ids=ids).logits[:, :-1]
                loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                         labels[:, 1:].reshape(-1), reduction="sum") / tokens
                loss.backward()  # each example's graph is freed before the next: the batch is summed, not padded
                total += float(loss.detach())
            optimizer.step()
            losses.append(round(total, 4))
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / DONE).write_text(json.dumps({"settings": settings, "examples": len(pairs), "losses": losses,
                                           "seconds": round(time.monotonic() - started, 1)}, indent=1) + "\n")
    return folder


def cmd_sft(args: Any) -> int:
    s = SftSettings(**{f.name: getattr(args, f.name) for f in fields(SftSettings)})
    folder = warm_start(s)
    done = json.loads((folder / DONE).read_text())
    print(f"{done['examples']} reference replies x {s.epochs} epoch(s): loss {done['losses'][0]:.3f} -> "
          f"{done['losses'][-1]:.3f} in {done['seconds']}s; the model: {folder} (polar train grpo {s.env_id} "
          f"--model {folder} ...)")
    return 0


def add_parser(subparsers: Any) -> None:
    """Register `polar train sft` on `polar train`'s subparsers."""
    from polar.training.grpo_job import add_episode_options

    sft = subparsers.add_parser("sft", help="a warm start before GRPO: a few epochs on the suite's reference "
                                            "solutions, as the harness asks for them (oracle episodes)")
    add_episode_options(sft)
    sft.add_argument("--epochs", type=int, default=2, help="passes over the reference replies (default 2)")
    sft.add_argument("--lr", type=float, default=5e-5, help="learning rate (default 5e-5)")
    sft.add_argument("--batch", type=int, default=4, help="replies per optimizer step (default 4)")
    sft.add_argument("--seed", type=int, default=0)
    sft.add_argument("--model", type=Path, default=None, help="a model folder to start from (default SmolLM2)")
    sft.add_argument("--out", type=Path, default=Path("runs/sft"),
                     help="the run folder: oracle/ (the episodes) and model/ (the result); default runs/sft")
    sft.set_defaults(fn=cmd_sft)
