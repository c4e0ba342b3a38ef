"""Training tokens per episode: `prefix_merge` against `per_turn` on the same traces (the compute a trainer pays).

`per_turn` makes one sample per model call, so every call's whole prompt is paid again; `prefix_merge` makes one
sample per chain, paying the shared history once. Episodes: the bundled `code-mini` tasks through the built-in
harness and pi, the behaviour policy `TokenOracle` (6 calls that inspect the workspace, then the reference
solution, as sampled tokens: real multi-turn tool calls and tool output), prompts from `PromptBuilder`, under
SmolLM2's chat template and under the reasoning-dropping test template (each reply then starts with a `<think>`
block that a re-render would drop). The figure is tokens (prompt + response) per episode, and the ratio
per_turn / prefix_merge.

    python benchmarks/prefix_merge_tokens.py [--quick]
"""

from __future__ import annotations

import statistics

import gymnasium as gym
from timing import options, table, write

from polar.envs.registration import register_envs
from polar.evaluation.runner import run_episode
from polar.policies.local_policy import load_model
from polar.policies.samples import Coverage, Sample, per_turn, prefix_merge
from polar.training.chat_templates import with_template
from polar.training.token_oracle import TokenOracle

LOOKS = 6
"""Calls that inspect the workspace before the reference solution is written: episodes of 8 calls."""


def tokens(samples: list[Sample]) -> int:
    return sum(len(s.prompt_ids) + len(s.response_ids) for s in samples)


def main() -> None:
    args = options(__doc__.splitlines()[0])
    register_envs()
    smol = load_model().tokenizer
    harnesses = ("builtin",) if args.quick else ("builtin", "pi")
    rows, figures = [], {}
    for template, tokenizer, reasoning in (("SmolLM2", smol, None),
                                           ("reasoning-dropping", with_template(smol), "Plan the next step.")):
        for harness in harnesses:
            env = gym.make("polar/Code-v0", harness=harness, suite="code-mini", max_turns=12, time_limit_s=300)
            policy = TokenOracle(tokenizer, reasoning=reasoning, look=LOOKS)
            per_call, merged, chained = [], [], Coverage()
            try:
                task_ids = env.unwrapped.task_ids[:1] if args.quick else env.unwrapped.task_ids
                for seed, task_id in enumerate(task_ids):
                    trace = run_episode(env, policy, seed=seed, task_id=task_id)
                    chains = prefix_merge(trace, tokenizer)
                    chained.add(chains)
                    per_call.append(tokens(per_turn(trace, tokenizer)))
                    merged.append(tokens(chains))
            finally:
                env.close()
            key = f"{harness}/{template}"
            figures[key] = {"episodes": chained.episodes, "calls_per_episode": chained.calls / chained.episodes,
                            "chains_per_episode": chained.chains / chained.episodes,
                            "per_turn_tokens": statistics.mean(per_call),
                            "prefix_merge_tokens": statistics.mean(merged),
                            "ratio": sum(per_call) / sum(merged)}
            f = figures[key]
            rows.append([harness, template, f["episodes"], f"{f['calls_per_episode']:.1f}",
                         f"{f['chains_per_episode']:.2f}", f"{f['per_turn_tokens']:,.0f}",
                         f"{f['prefix_merge_tokens']:,.0f}", f"{f['ratio']:.2f}x"])
    print(table(["harness", "template", "episodes", "calls/episode", "chains/episode", "per_turn tokens/episode",
                 "prefix_merge tokens/episode", "per_turn / prefix_merge"], rows))
    print(f"wrote {write('prefix_merge_tokens', args.out, {'figures': figures})}")


if __name__ == "__main__":
    main()
