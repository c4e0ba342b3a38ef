"""Does a policy get better by training through polar? SmolLM2-135M on the CPU, GRPO through Code-v0's answer
harness on code-warmup-train, judged on code-warmup-heldout (tasks it never trained on).

One command, three steps (four with a warm start), each resumed when rerun (the eval runs skip the episodes they
hold, `polar train grpo` resumes from its newest checkpoint):
1. the base model's held-out pass@1 (`warmup_base.measure`: k samples per task, one batch per task);
2. with `--sft-epochs N`: `polar train sft polar/Code-v0 --suite code-warmup-train --tasks <every other task>
   --harness answer --max-turns 1` (N epochs on those tasks' reference solutions), and that model's held-out pass@1;
   GRPO starts from it and trains on the other half of the train split only (`sft_and_grpo_tasks`);
3. `polar train grpo polar/Code-v0 --suite code-warmup-train --harness answer --max-turns 1` for `--steps` steps;
4. the final checkpoint's held-out pass@1, with the same eval settings as step 1.
It writes `benchmarks/results/learning.json` (both pass@1 with their 95% Wilson intervals over tasks, whether the
intervals overlap, the gain with its paired bootstrap interval over tasks, the steps, each step's seconds, the
settings) and `benchmarks/results/learning_curve.png` (the training curve: reward and pass rate per step on the
train split).

    python benchmarks/learning.py [--steps 50] [--k 4] [--prompts 2] [--group 4] [--lr 2e-5] [--sft-epochs 0]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import time
from pathlib import Path

from timing import table, write
from warmup_base import measure

HELDOUT, TRAIN = "code-warmup-heldout", "code-warmup-train"


def sft_and_grpo_tasks() -> tuple[str, str]:
    """The train split halved, every other task by id (both halves mix one-liners and loops): the warm start's tasks
    and GRPO's. GRPO on the tasks the warm start saw learns nothing: their groups all pass (measured:
    after 3 epochs on all 32, the pass rate of GRPO's steps 1-12 was 0.875 to 1.0, most groups uniform)."""
    from polar.tasks.code import load_suite

    ids = [t.id for t in load_suite(TRAIN)]
    return ",".join(ids[0::2]), ",".join(ids[1::2])


def compare(base: dict, trained: dict) -> dict:
    """The gain and how sure it is: the two separate Wilson intervals (do they overlap?), and the paired bootstrap
    interval over the held-out tasks, which credits that both evals ran the same tasks."""
    from polar.evaluation.stats import paired_gain

    ids = sorted(base["solved_of_k"])
    gain, low, high = paired_gain([base["solved_of_k"][i] / base["k"] for i in ids],
                                  [trained["solved_of_k"][i] / trained["k"] for i in ids])
    return {"gain": round(gain, 6), "gain_interval95_paired": [round(low, 6), round(high, 6)],
            "tasks_better": sum(trained["solved_of_k"][i] > base["solved_of_k"][i] for i in ids),
            "tasks_worse": sum(trained["solved_of_k"][i] < base["solved_of_k"][i] for i in ids),
            "intervals_separate": trained["interval95"][0] > base["interval95"][1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50, help="GRPO steps")
    parser.add_argument("--prompts", type=int, default=2, help="train tasks per step")
    parser.add_argument("--group", type=int, default=4, help="episodes per task per step (the GRPO group)")
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--sft-epochs", type=int, default=0, help="a warm start first: epochs on the train split's "
                                                                    "reference solutions (0: none)")
    parser.add_argument("--sft-lr", type=float, default=5e-5)
    parser.add_argument("--k", type=int, default=4, help="held-out samples per task, before and after")
    parser.add_argument("--tasks", type=int, default=None, help="only the first N held-out tasks")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--jobs", type=int, default=8, help="episodes at once in an eval: one task's k replies are one "
                                                            "batch, and the other episodes grade while it samples")
    parser.add_argument("--temperature", type=float, default=0.7, help="for training and both evals")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=Path, default=Path("runs/learning"), help="where the evals and training go")
    parser.add_argument("--out", type=Path, help="JSON path (default: benchmarks/results/learning.json)")
    args = parser.parse_args()
    import torch

    from polar.policies.group_sampling import GroupedPolicy
    from polar.policies.local_policy import SAMPLING_THREADS, LocalPolicy, torch_threads
    from polar.training.grpo_job import CHECKPOINTS, PLOT, GrpoSettings, train
    from polar.training.sft import DONE, SftSettings, warm_start

    def heldout(model_path: Path | None, runs: Path) -> dict:
        """One thread samples (SAMPLING_THREADS: the graders run beside it), as in training's rollouts."""
        policy = LocalPolicy(max_new_tokens=args.max_new_tokens, temperature=args.temperature, model_path=model_path)
        with torch_threads(SAMPLING_THREADS):
            return measure(HELDOUT, args, GroupedPolicy(policy, args.k), runs)

    base = heldout(None, args.runs / "base")
    warm, warm_figures, grpo_tasks = None, {}, None
    if args.sft_epochs:
        sft_tasks, grpo_tasks = sft_and_grpo_tasks()
        warm = warm_start(SftSettings(env_id="polar/Code-v0", suite=TRAIN, tasks=sft_tasks, harness="answer",
                                      max_turns=1, epochs=args.sft_epochs, lr=args.sft_lr, seed=args.seed,
                                      out=args.runs / "sft"))
        done = json.loads((warm / DONE).read_text())
        made_by = hashlib.sha256(json.dumps(done["settings"], sort_keys=True).encode()).hexdigest()[:8]
        warm_figures = {"warm_start": {**heldout(warm, args.runs / f"warm-{made_by}"), "examples": done["examples"],
                                       "losses": done["losses"], "train_seconds": done["seconds"]}}
    settings = GrpoSettings(env_id="polar/Code-v0", suite=TRAIN, tasks=grpo_tasks, harness="answer", steps=args.steps,
                            prompts=args.prompts, group=args.group, max_turns=1, max_new_tokens=args.max_new_tokens,
                            lr=args.lr, temperature=args.temperature, seed=args.seed, save_every=10,
                            model=warm, out=args.runs / "train")
    started = time.monotonic()
    curve = train(settings)
    train_s = time.monotonic() - started
    trained = heldout(settings.run / CHECKPOINTS / f"checkpoint-{args.steps}", args.runs / "trained")

    figures = {
        "base": base, **warm_figures, "trained": trained, **compare(base, trained), "steps": len(curve),
        "train_seconds_this_call": round(train_s, 1), "step_seconds": [r.seconds for r in curve],
        "train_curve": [{"step": r.step, "reward": r.reward, "pass_rate": r.pass_rate,
                         "group_spread": r.group_spread, "logp_diff_mean": r.logp_diff_mean} for r in curve],
        "settings": {"model": "SmolLM2-135M-Instruct", "env": "polar/Code-v0", "harness": "answer",
                     "train_suite": TRAIN, "eval_suite": HELDOUT, "k": args.k, "tasks": args.tasks,
                     "prompts": args.prompts, "group": args.group, "lr": args.lr, "temperature": args.temperature,
                     "max_new_tokens": args.max_new_tokens, "seed": args.seed, "loss": "GRPO (TRL), beta 0",
                     "sft_epochs": args.sft_epochs, "sft_lr": args.sft_lr if args.sft_epochs else None,
                     "grpo_tasks": grpo_tasks or "the whole train split",
                     "torch_threads": torch.get_num_threads(), "sampling_threads": SAMPLING_THREADS,
                     "interval": "95% Wilson over tasks; the gain: a paired percentile bootstrap over tasks"},
    }
    path = write("learning", args.out, figures)
    shutil.copyfile(settings.run / PLOT, path.with_name("learning_curve.png"))
    evals = [("base", base), *(("after the warm start", r) for r in warm_figures.values()),
             (f"after {len(curve)} GRPO steps", trained)]
    print(table(["held-out", "pass@1", "95% interval", "seconds"],
                [[name, f"{r['pass@1']:.3f}", f"[{r['interval95'][0]:.3f}, {r['interval95'][1]:.3f}]", r["seconds"]]
                 for name, r in evals]))
    print(f"gain {figures['gain']:.3f}, paired 95% interval {figures['gain_interval95_paired']}, "
          f"{figures['tasks_better']} tasks better and {figures['tasks_worse']} worse; "
          f"separate intervals: {figures['intervals_separate']}; wrote {path} and "
          f"{path.with_name('learning_curve.png')}")


if __name__ == "__main__":
    main()
