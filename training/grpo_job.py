"""`polar train grpo`: the training main job. GRPO through a polar env and harness, on the embedded SmolLM2, on the CPU.

Every chain of every episode is trained (`PolarGRPOTrainer`, TRL 1.16). The run folder holds what a user needs to
judge the run:
- `curve.jsonl`: one row per step. It has the mean reward, the pass rate, the reward's spread within GRPO groups,
  the sampled tokens, the seconds taken, the fingerprint of the weights that sampled the step, and the ids of its
  episodes.
- `curve.png`: the same rows as a plot.
- `traces.jsonl`: every episode, in polar's trace format.
- `checkpoints/checkpoint-N`: the model, the optimizer and the RNG state, every `--save-every` steps. Rerunning the
  same command resumes from the newest one after a crash or a SIGKILL. Rows and traces of later steps are dropped,
  since the resumed run plays those steps again.

To evaluate a checkpoint: `polar eval ENV --policy local --model RUN/checkpoints/checkpoint-N`. To see the curve:
`polar report RUN`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from polar.errors import PolarError
from polar.evaluation.curve import CURVE, PLOT, StepRow, plot_curve, read_curve
from polar.trace import Trace, append_jsonl, keep_jsonl

TRACES, CHECKPOINTS, SETTINGS = "traces.jsonl", "checkpoints", "train.json"


def weights_fingerprint(model: Any) -> str:
    """A digest of the weights (the first 4,096 values of every tensor): which weights sampled a step."""
    digest = hashlib.sha256()
    for name, parameter in model.named_parameters():
        digest.update(name.encode())
        digest.update(parameter.detach().reshape(-1)[:4096].float().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


def step_row(step: int, traces: list[Trace], outcome: str, seconds: float, weights: str,
             loss: float | None, logp_diff: tuple[float | None, float | None] = (None, None)) -> StepRow:
    """Summarise one step's episodes. A GRPO group is the step's episodes of one task."""
    groups: dict[str, list[float]] = {}
    for trace in traces:
        groups.setdefault(trace.task_id, []).append(trace.reward)
    rewards = [t.reward for t in traces]
    return StepRow(
        step=step,
        reward=statistics.fmean(rewards) if rewards else 0.0,
        pass_rate=statistics.fmean(t.solved(outcome) for t in traces) if traces else 0.0,
        group_spread=statistics.fmean(statistics.pstdev(g) for g in groups.values()) if groups else 0.0,
        episodes=len(traces),
        tokens=sum(len(turn.reply.token_ids or []) for t in traces for turn in t.turns),
        seconds=round(seconds, 2),
        weights=weights,
        loss=loss,
        episode_ids=[t.episode_id for t in traces],
        logp_diff_mean=logp_diff[0],
        logp_diff_max=logp_diff[1],
    )


def keep_steps_up_to(run: Path, step: int) -> None:
    """Drop the curve rows and traces of steps after `step` (a resumed run plays them again)."""
    curve = run / CURVE
    if not curve.is_file():
        return
    kept = [r for r in read_curve(run) if r.step <= step]
    curve.write_text("".join(json.dumps(asdict(r)) + "\n" for r in kept), encoding="utf-8")
    ids = {i for r in kept for i in r.episode_ids}
    keep_jsonl(run / TRACES, lambda trace: trace.episode_id in ids)


def last_checkpoint(run: Path) -> tuple[Path, int] | None:
    """The newest complete checkpoint of a run (its trainer state written last), and its step."""
    found = []
    for folder in (run / CHECKPOINTS).glob("checkpoint-*"):
        if (folder / "trainer_state.json").is_file() and folder.name.split("-")[-1].isdigit():
            found.append((int(folder.name.split("-")[-1]), folder))
    if not found:
        return None
    step, folder = max(found)
    return folder, step


def make_callback(run: Path, outcome: str, title: str, bar: Any) -> Any:
    """The TRL callback that writes a curve row, the traces and the plot after each step, and moves the bar."""
    from transformers import TrainerCallback

    from polar.training.trl import LOGP_DIFF

    class CurveCallback(TrainerCallback):
        def __init__(self) -> None:
            self.pending: list[Trace] = []
            self.weights, self.started = "", time.monotonic()

        def on_episode(self, rollout: Any) -> None:
            self.pending.append(rollout.trace)

        def on_step_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            self.weights, self.started = weights_fingerprint(model), time.monotonic()

        def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kw: Any) -> None:
            """After each step (`logging_steps=1`), before its checkpoint: a row without its checkpoint is
            dropped on resume."""
            if not logs or "loss" not in logs:
                return
            diff = (logs.get(LOGP_DIFF + "mean"), logs.get(LOGP_DIFF + "max"))
            row = step_row(state.global_step, self.pending, outcome, time.monotonic() - self.started,
                           self.weights, float(logs["loss"]), diff)
            append_jsonl(run / TRACES, self.pending)
            with (run / CURVE).open("a", encoding="utf-8") as f:
                f.write(json.dumps(asdict(row)) + "\n")
            self.pending = []
            plot_curve(read_curve(run), title).savefig(run / PLOT)
            bar.update(1)
            bar.set_postfix(reward=f"{row.reward:.3f}", passed=f"{row.pass_rate:.2f}", tokens=row.tokens)

    return CurveCallback()


@dataclass(frozen=True)
class EpisodeSettings:
    """What a training command plays episodes of (`add_episode_options`)."""

    env_id: str = "polar/Code-v0"
    suite: str | None = None
    tasks: str | None = None
    """Comma-separated task ids; None: the whole suite."""
    harness: str = "builtin"
    max_turns: int = 4
    seed: int = 0
    model: Path | None = None
    """The model to start from (a model folder or a GGUF); None: SmolLM2-135M-Instruct."""
    out: Path | None = None
    """The run folder."""

    CONTINUED_BY: ClassVar[tuple[str, ...]] = ("out",)
    """The settings a rerun may change and still continue the same run."""

    def identity(self) -> dict[str, Any]:
        """What a rerun must share with the run it continues (JSON: paths as text)."""
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()
                if k not in self.CONTINUED_BY}


@dataclass(frozen=True)
class GrpoSettings(EpisodeSettings):
    """What one `polar train grpo` run trains: its command-line options (`polar train grpo --help`)."""

    sandbox: str = "local"
    steps: int = 50
    prompts: int = 2
    """Tasks per step."""
    group: int = 4
    """Episodes per task per step: the GRPO group."""
    max_new_tokens: int = 160
    max_prompt_length: int = 2048
    time_limit: float = 300.0
    lr: float = 1e-5
    temperature: float = 1.0
    save_every: int = 5
    out: Path | None = None
    """The run folder; None: `runs/train-<env>-<harness>`."""

    CONTINUED_BY: ClassVar[tuple[str, ...]] = ("out", "steps")
    """More `steps` continue a run."""

    @property
    def run(self) -> Path:
        return self.out or Path("runs") / f"train-{self.env_id.split('/')[-1]}-{self.harness}"


def train(settings: GrpoSettings, reward_funcs: tuple = ()) -> list[StepRow]:
    """Train (or resume) the run `settings` names; return its curve. `reward_funcs`: extra TRL reward functions
    added to the env's reward (tests use one so that a group always has a signal)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from tqdm import tqdm
    from transformers import PrinterCallback
    from trl import GRPOConfig

    from polar.envs.registration import env_family, register_envs
    from polar.policies.local_policy import MODEL_NAME, load_model
    from polar.training.trl import grpo_trainer
    from polar.training.verl.data import dataset_rows

    register_envs()
    run, s = settings.run, settings
    run.mkdir(parents=True, exist_ok=True)
    saved = run / SETTINGS
    if saved.is_file() and json.loads(saved.read_text()) != s.identity():
        raise PolarError(f"{run} holds a training run with other settings ({saved}); pass another --out, or rerun "
                         "with the same options to resume it")
    saved.write_text(json.dumps(s.identity(), indent=2) + "\n")
    resume = last_checkpoint(run)
    keep_steps_up_to(run, resume[1] if resume else 0)
    if resume and resume[1] >= s.steps:
        print(f"{run}: already trained {resume[1]} step(s); the curve is in {run / PLOT}")
        return read_curve(run)

    rows = dataset_rows(s.env_id, suite=s.suite, tasks=s.tasks.split(",") if s.tasks else None, harness=s.harness,
                        sandbox=s.sandbox, seed=s.seed, max_turns=s.max_turns, time_limit_s=s.time_limit)
    if len(rows) < s.prompts:
        raise PolarError(f"--prompts {s.prompts} is more than the {len(rows)} task(s) chosen; lower it or "
                         "choose more tasks")
    print(f"loading {s.model or MODEL_NAME} on the CPU ...", end=" ", flush=True)
    started = time.monotonic()
    lm = load_model(s.model)
    print(f"{time.monotonic() - started:.1f}s", flush=True)
    # no gradient checkpointing (TRL's default): a 135M model's activations fit many times over, and checkpointing
    # runs every layer's forward twice
    config = GRPOConfig(
        output_dir=str(run / CHECKPOINTS), per_device_train_batch_size=s.prompts * s.group,
        num_generations=s.group, max_completion_length=s.max_new_tokens, max_steps=s.steps, learning_rate=s.lr,
        beta=0.0, temperature=s.temperature, use_cpu=True, bf16=False, gradient_checkpointing=False,
        seed=s.seed, logging_steps=1,
        save_strategy="steps", save_steps=s.save_every, save_total_limit=2, report_to="none", disable_tqdm=True,
        dataloader_num_workers=0)
    title = f"GRPO on {s.env_id} ({s.harness}), {s.model.name if s.model else MODEL_NAME}"
    with tqdm(total=s.steps, initial=resume[1] if resume else 0, desc="train", unit="step", file=sys.stderr) as bar:
        callback = make_callback(run, env_family(s.env_id).reward.outcome, title, bar)
        trainer = grpo_trainer(lm.model, lm.tokenizer, rows, config, reward_funcs=reward_funcs,
                               max_prompt_length=s.max_prompt_length, on_episode=callback.on_episode)
        trainer.remove_callback(PrinterCallback)  # the bar shows each step; the curve keeps it
        trainer.add_callback(callback)
        trainer.train(resume_from_checkpoint=str(resume[0]) if resume else None)
    final = run / CHECKPOINTS / f"checkpoint-{s.steps}"
    trainer.save_model(str(final))
    trainer.state.save_to_json(str(final / "trainer_state.json"))
    return read_curve(run)


def cmd_grpo(args: argparse.Namespace) -> int:
    settings = GrpoSettings(**{f.name: getattr(args, f.name) for f in fields(GrpoSettings)})
    curve = train(settings)
    first, last = curve[0], curve[-1]
    final = settings.run / CHECKPOINTS / f"checkpoint-{settings.steps}"
    print(f"{len(curve)} step(s): mean reward {first.reward:.3f} -> {last.reward:.3f}, pass rate "
          f"{first.pass_rate:.2f} -> {last.pass_rate:.2f}; curve: {settings.run / PLOT}; the model: {final} "
          f"(polar eval {settings.env_id} --policy local --model {final})")
    return 0


def add_episode_options(parser: Any) -> None:
    """What a training command plays episodes of: the env, its tasks, the harness and its turn budget."""
    parser.add_argument("env_id", nargs="?", default="polar/Code-v0")
    parser.add_argument("--suite", default=None, help="a bundled suite name or a directory of tasks")
    parser.add_argument("--tasks", help="comma-separated task ids (default: the whole suite)")
    parser.add_argument("--harness", default="builtin")
    parser.add_argument("--max-turns", type=int, default=4, help="model calls per episode (default 4)")


def add_parser(subparsers: Any) -> None:
    """Register `polar train grpo` on `polar train`'s subparsers."""
    grpo = subparsers.add_parser("grpo", help="GRPO on the embedded SmolLM2 through an env, on the CPU: a learning "
                                              "curve, resumable checkpoints, every episode's trace")
    add_episode_options(grpo)
    grpo.add_argument("--sandbox", default="local", help="local (bubblewrap, default) | docker")
    grpo.add_argument("--steps", type=int, default=50, help="optimizer steps (default 50)")
    grpo.add_argument("--prompts", type=int, default=2, help="tasks per step (default 2)")
    grpo.add_argument("--group", type=int, default=4, help="episodes per task per step: the GRPO group (default 4)")
    grpo.add_argument("--max-new-tokens", type=int, default=160, help="tokens per model call (default 160)")
    grpo.add_argument("--max-prompt-length", type=int, default=2048,
                      help="longest prompt; a longer one is left-truncated (default 2048)")
    grpo.add_argument("--time-limit", type=float, default=300.0, help="seconds per episode (default 300)")
    grpo.add_argument("--lr", type=float, default=1e-5, help="learning rate (default 1e-5)")
    grpo.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    grpo.add_argument("--seed", type=int, default=0)
    grpo.add_argument("--save-every", type=int, default=5, help="steps between checkpoints (default 5)")
    grpo.add_argument("--model", type=Path, default=None,
                      help="the model to start from: a model folder (a checkpoint) or a GGUF (default SmolLM2)")
    grpo.add_argument("--out", type=Path, default=None, help="the run folder (default runs/train-<env>-<harness>)")
    grpo.set_defaults(fn=cmd_grpo)
