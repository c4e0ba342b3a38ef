"""Merge coverage per harness: how `prefix_merge` chains traces from every harness, under two chat templates.

For each harness (the built-in one and every external CLI) and each template (SmolLM2's own, and
`REASONING_DROPPING`, which drops earlier reasoning and re-serialises tool-call arguments), Code-v0 episodes on the
bundled `code-mini` tasks are played by these behaviour policies, each recording the token ids it conditioned on
and sampled (prompts from `PromptBuilder`):

- `token-oracle`: `TokenOracle`, the reference solution as sampled tokens after a few calls that inspect the
  workspace (every reply a real tool call; under the reasoning-dropping template each starts with a `<think>`
  block a re-render would drop): long multi-turn episodes;
- `local-long`: `LocalPolicy` on the tiny random long-context model (SmolLM2's tokenizer, 64k positions, so every
  harness's first request fits): real sampled ids, whose replies are nonsense, so most episodes end after a call;
- `vllm`: `VLLMPolicy` against a vLLM server serving that model (`--vllm URL`; not run when none is given).

Per harness, template and policy: episodes, calls per episode, merge coverage (the share of calls, after each
episode's first, that joined the chain of the call before them), chains per episode, single-chain episodes and
the chain breaks by category, with the harness's declared compaction and sub-agent switches
(`harnesses/declaration.py`). `python benchmarks/coverage_by_harness.py --readme` prints the Markdown table
training/README.md holds (tests/training/test_coverage_table.py checks that table against the results file).

    python benchmarks/coverage_by_harness.py [--quick] [--tasks N] [--looks N] [--harnesses A,B] [--vllm URL] [--readme]

The results file is rewritten after every row, and a rerun with the same `--out` keeps the rows it already holds
(one task of every harness took about 40 minutes on two busy cores): delete the file to measure again.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from timing import RESULTS, table, write

TEMPLATES = ("SmolLM2", "reasoning-dropping")
REASONING = "Plan the next step."
"""The `<think>` block the token oracle writes before each reply under the reasoning-dropping template."""
RESULT = RESULTS / "coverage_by_harness.json"


POLICIES = ("token-oracle", "local-long", "vllm")


def make_policy(name: str, template: str, tokenizer: Any, looks: int, vllm: str, folder: Path) -> Any:
    """The behaviour policy `name` (one of `POLICIES`), its prompts rendered by `tokenizer` (`template`)."""
    from polar.policies.local_policy import LocalPolicy
    from polar.policies.long_model import build_long_model
    from polar.policies.prompting import PromptBuilder
    from polar.policies.vllm_policy import VLLMPolicy
    from polar.training.token_oracle import TokenOracle

    if name == "token-oracle":
        return TokenOracle(tokenizer, reasoning=REASONING if template != "SmolLM2" else None, look=looks)
    if name == "local-long":
        return LocalPolicy(model_path=build_long_model(), max_new_tokens=24, seed=0, builder=PromptBuilder(tokenizer))
    tokenizer.save_pretrained(folder / template)  # the served model's tokenizer, with this template
    policy = VLLMPolicy(base_url=vllm, tokenizer=str(folder / template), max_tokens=24, seed=0)
    policy.check()
    return policy


def measure(harness: str, policy: Any, tokenizer: Any, tasks: int, max_turns: int) -> dict[str, Any]:
    """Coverage of `tasks` code-mini episodes of `policy` through `harness`."""
    import gymnasium as gym

    from polar.evaluation.runner import run_episode
    from polar.harnesses import make_harness
    from polar.policies.samples import Coverage, prefix_merge

    env = gym.make("polar/Code-v0", harness=harness, suite="code-mini", max_turns=max_turns, time_limit_s=300)
    total, statuses = Coverage(), {}
    try:
        for seed, task_id in enumerate(env.unwrapped.task_ids[:tasks]):
            trace = run_episode(env, policy, seed=seed, task_id=task_id)
            statuses[trace.status] = statuses.get(trace.status, 0) + 1
            if trace.error:
                print(f"{harness} {task_id}: {trace.status}: {trace.error[-1500:]}", file=sys.stderr)
            if trace.turns:
                total.add(prefix_merge(trace, tokenizer))
    finally:
        env.close()
    declared = make_harness(harness).declared
    episodes = max(total.episodes, 1)
    return {"episodes": total.episodes, "calls_per_episode": round(total.calls / episodes, 2),
            "merge_coverage": round(total.merged, 4), "chains_per_episode": round(total.chains / episodes, 3),
            "single_chain": total.single_chain, "breaks": dict(sorted(total.breaks.items())), "statuses": statuses,
            "compaction": declared.compaction, "sub_agents": declared.sub_agents}


def readme_table(figures: dict[str, Any]) -> str:
    """The README's coverage table: one row per harness, template and policy, in the results file's order."""
    rows = []
    for key, f in figures.items():
        harness, template, policy = key.split("/")
        breaks = ", ".join(f"{k} {v}" for k, v in f["breaks"].items()) or "none"
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(f["statuses"].items()))
        rows.append([f"`{harness}`", template, policy, statuses, f["episodes"], f"{f['calls_per_episode']:.1f}",
                     f"{f['merge_coverage']:.3f}" if f["calls_per_episode"] > 1 else "—",
                     f"{f['chains_per_episode']:.2f}", f"{f['single_chain']}/{f['episodes']}", breaks,
                     f["compaction"], f["sub_agents"]])
    return table(["harness", "template", "policy", "statuses", "episodes", "calls/episode", "merge coverage",
                  "chains/episode", "single-chain", "breaks", "compaction off", "sub-agents"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one task, the built-in harness and pi")
    parser.add_argument("--tasks", type=int, default=2, help="code-mini tasks per harness, template and policy")
    parser.add_argument("--looks", type=int, default=4, help="token oracle: calls that inspect before solving")
    parser.add_argument("--harnesses", help="comma-separated harnesses to measure (default: every one)")
    parser.add_argument("--vllm", help="base URL of a vLLM server serving the long-context test model")
    parser.add_argument("--readme", action="store_true", help="print the README table of the results file")
    parser.add_argument("--out", type=Path, help="write the JSON here instead of benchmarks/results/")
    args = parser.parse_args()
    if args.readme:
        print(readme_table(json.loads(RESULT.read_text())["figures"]))
        return

    from polar.envs.registration import register_envs
    from polar.harnesses import EXTERNAL
    from polar.policies.local_policy import load_model
    from polar.training.chat_templates import with_template

    register_envs()
    smol = load_model().tokenizer
    harnesses = ("builtin", "pi") if args.quick else ("builtin", *EXTERNAL)
    measured = args.harnesses.split(",") if args.harnesses else harnesses
    tasks = 1 if args.quick else args.tasks
    out = args.out or RESULT
    figures: dict[str, Any] = json.loads(out.read_text())["figures"] if out.exists() else {}

    def ordered() -> dict[str, Any]:
        return dict(sorted(figures.items(), key=lambda kv: (harnesses.index(kv[0].split("/")[0]), kv[0])))

    tokenizers = {"SmolLM2": smol, "reasoning-dropping": with_template(smol)}
    # the token oracle through every harness under both templates first, then the sampled policies
    with tempfile.TemporaryDirectory() as folder:
        for name in POLICIES if args.vllm else POLICIES[:2]:
            for template in TEMPLATES:
                todo = [h for h in harnesses if h in measured and f"{h}/{template}/{name}" not in figures]
                if not todo:
                    continue
                policy = make_policy(name, template, tokenizers[template], args.looks, args.vllm, Path(folder))
                for harness in todo:
                    key = f"{harness}/{template}/{name}"
                    figures[key] = measure(harness, policy, tokenizers[template], tasks, max_turns=args.looks + 4)
                    print(key, json.dumps(figures[key]), file=sys.stderr, flush=True)
                    write("coverage_by_harness", out, {"figures": ordered()})
    print(readme_table(ordered()))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
