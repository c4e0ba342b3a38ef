"""The embedded model's pass@1 on the code-warmup splits through the answer harness, before any training: where RL on
the CPU starts, and the baseline a trained checkpoint must beat on the held-out split.

Each split is a `polar eval` run (SmolLM2-135M, `--harness answer`, k samples per task, the local sandbox), with
the k replies to a task's one request sampled as one batch (`GroupedPolicy`). pass@1's 95% interval is Wilson's
over tasks, as everywhere (`polar.evaluation.stats`). Runs resume: rerunning skips the episodes already in `--runs`;
`seconds` is the eval's wall time while its episodes ran, so a resumed run reports the same.

    python benchmarks/warmup_base.py [--k 8] [--tasks N] [--max-new-tokens 128] [--temperature 0.7]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
from pathlib import Path

import gymnasium as gym
from timing import table, write

SPLITS = ("code-warmup-train", "code-warmup-heldout")


def measure(split: str, args: argparse.Namespace, policy, runs: Path) -> dict:
    """One `polar eval` of `policy` on `split` (k = `args.k`, the first `args.tasks` tasks), resumed from `runs`."""
    from polar.envs.registration import register_envs
    from polar.evaluation.evaluate import EvalRun, EvalSettings, run_eval, suite_hash, write_outputs
    from polar.evaluation.stats import wilson_interval
    from polar.tasks.code import load_suite

    register_envs()
    tasks = load_suite(split)[: args.tasks]
    settings = EvalSettings(env_id="polar/Code-v0", harness="answer", sandbox="local", policy="local",
                            model=policy.model, suite=split, suite_hash=suite_hash(tasks),
                            tasks=tuple(t.id for t in tasks), k=args.k, seed=0, max_turns=1, time_limit_s=300.0)
    run = EvalRun.open(runs / f"{split}-k{args.k}-t{args.temperature}-n{args.max_new_tokens}", settings)
    make_env = functools.partial(gym.make, "polar/Code-v0", harness="answer", sandbox="local", suite=split,
                                 max_turns=1, time_limit_s=300.0)
    asyncio.run(run_eval(run, make_env, policy, jobs=args.jobs))
    summary = write_outputs(run, "solved")
    solved: dict[str, int] = {}
    for (task_id, _), trace in sorted(run.done.items()):
        solved[task_id] = solved.get(task_id, 0) + int(trace.solved("solved"))
    low, high = wilson_interval(summary["pass@1"], summary["tasks"])
    return {"tasks": summary["tasks"], "k": args.k, "pass@1": summary["pass@1"], "interval95": [low, high],
            "solved_of_k": solved, "statuses": {s: c for s, c in summary["status_counts"].items() if c},
            "tokens": summary["tokens"], "seconds": summary["wall_time_s"], "run": str(run.out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=8, help="samples per task")
    parser.add_argument("--tasks", type=int, default=None, help="only the first N tasks of each split")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--jobs", type=int, default=8, help="episodes at once in an eval: one task's k replies are one "
                                                            "batch, and the other episodes grade while it samples")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--runs", type=Path, default=Path("runs/warmup-base"), help="where the eval runs go")
    parser.add_argument("--out", type=Path, help="JSON path (default: benchmarks/results/warmup_base.json)")
    args = parser.parse_args()
    import torch

    from polar.policies.group_sampling import GroupedPolicy
    from polar.policies.local_policy import LocalPolicy

    policy = GroupedPolicy(LocalPolicy(max_new_tokens=args.max_new_tokens, temperature=args.temperature), args.k)
    splits = {split: measure(split, args, policy, args.runs) for split in SPLITS}
    settings = {"model": policy.model, "harness": "answer", "sandbox": "local", "k": args.k,
                "temperature": args.temperature, "max_new_tokens": args.max_new_tokens, "tasks": args.tasks,
                "torch_threads": torch.get_num_threads(), "interval": "95% Wilson over tasks"}
    path = write("warmup_base", args.out, {"splits": splits, "settings": settings})
    print(table(["split", "tasks", "k", "pass@1", "95% interval", "seconds"],
                [[s, r["tasks"], r["k"], f"{r['pass@1']:.3f}", f"[{r['interval95'][0]:.3f}, {r['interval95'][1]:.3f}]",
                  r["seconds"]] for s, r in splits.items()]))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
