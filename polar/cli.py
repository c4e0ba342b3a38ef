"""The `polar` command: list envs, run episodes, validate traces, check the machine."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polar.errors import PolarError, UnknownNameError

if TYPE_CHECKING:
    from polar.reward import RewardSpec


def cmd_envs(args: argparse.Namespace) -> int:
    from polar.envs.registration import ENVS

    width = max(map(len, ENVS))
    for env_id, (_, description) in ENVS.items():
        print(f"{env_id:<{width}}  {description}")
    return 0


def _policy(args: argparse.Namespace):
    from polar.policies import make_policy

    options: dict = {}
    if args.policy == "scripted":
        if not args.replies:
            raise PolarError("--policy scripted needs --replies FILE (a JSON list of replies)")
        options["replies"] = json.loads(Path(args.replies).read_text())
    elif args.policy == "openai":
        options = {k: v for k, v in {"model": args.model, "base_url": args.base_url}.items() if v}
    elif args.policy == "local":
        options = {"max_new_tokens": args.max_new_tokens, "temperature": args.temperature}
        options |= {"model": args.model} if args.model else {}
    elif args.policy == "vllm":
        options = {k: v for k, v in {"model": args.model, "base_url": args.base_url}.items() if v}
        options |= {"max_tokens": args.max_new_tokens, "temperature": args.temperature}
    policy = make_policy(args.policy, **options)
    if hasattr(policy, "check"):
        policy.check()
    if args.policy == "local":  # loaded here, in one line, rather than inside the first episode
        from polar.policies.local_policy import load_model

        started = time.monotonic()
        print(f"loading {policy.model} on the CPU ...", end=" ", flush=True)
        load_model(policy.model_path)
        print(f"{time.monotonic() - started:.1f}s", flush=True)
    return policy


def cmd_run(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from polar.envs.registration import ENVS, register_envs
    from polar.evaluation.runner import run_episodes
    from polar.trace import Trace

    register_envs()
    if args.env_id not in ENVS:
        raise UnknownNameError("env id", args.env_id, ENVS)
    out = Path(args.out or f"runs/{args.env_id.split('/')[-1]}-{time.strftime('%Y%m%d-%H%M%S')}")
    if (out / "traces.jsonl").exists():
        raise PolarError(f"{out} already holds traces.jsonl; pass another --out (nothing was overwritten)")
    policy = _policy(args)
    env = gym.make(args.env_id, harness=args.harness, sandbox=args.sandbox, suite=args.suite,
                   max_turns=_max_turns(args), time_limit_s=args.time_limit)
    print(f"{args.env_id}: {args.episodes} episode(s), harness={args.harness}, sandbox={args.sandbox}, "
          f"policy={args.policy} -> {out}", flush=True)
    print(f"{'#':>3}  {'task':<28} {'status':<15} {'turns':>5} {'reward':>7} {'time':>7}", flush=True)
    count = 0
    started = time.monotonic()

    def show(trace: Trace) -> None:
        nonlocal count, started
        count += 1
        print(f"{count:>3}  {trace.task_id:<28} {trace.status:<15} {len(trace.turns):>5} {trace.reward:>7.3f} "
              f"{time.monotonic() - started:>6.1f}s", flush=True)
        started = time.monotonic()

    try:
        traces = run_episodes(env, policy, episodes=args.episodes, seed=args.seed, out=out, on_episode=show)
    finally:
        env.close()
    mean = sum(t.reward for t in traces) / len(traces)
    solved = sum(t.reward >= 1.0 for t in traces)
    print(f"mean reward {mean:.3f}  solved {solved}/{len(traces)}  traces: {out / 'traces.jsonl'}, "
          f"{out / 'traces.parquet'}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    import asyncio

    import gymnasium as gym
    from tqdm import tqdm

    from polar.envs.registration import ENVS, register_envs
    from polar.evaluation.evaluate import EvalRun, EvalSettings, run_eval, suite_hash, write_outputs
    from polar.tasks import select_tasks
    from polar.tasks.folders import require_all

    register_envs()
    if args.env_id not in ENVS:
        raise UnknownNameError("env id", args.env_id, ENVS)
    policy = _policy(args)  # fails fast (an endpoint that is down) before any sandbox starts

    # each worker keeps its next sandbox started ahead of need; a partial, so `--ray` can send it to the nodes
    make_env = functools.partial(gym.make, args.env_id, harness=args.harness, sandbox=args.sandbox,
                                 suite=args.suite if args.ray is None else _shared_path(args.suite),
                                 max_turns=_max_turns(args), time_limit_s=args.time_limit, pool=1)
    probe = make_env(pool=0).unwrapped
    tasks = probe.tasks
    if args.strict:
        require_all(tasks, args.suite)
    for name, why in getattr(tasks, "rejected", {}).items():  # without --strict a bad task folder costs only itself
        print(f"LEFT OUT {name}: does not load: {why.splitlines()[0] if why else ''}", flush=True)
    if args.tasks:
        tasks = select_tasks(tasks, args.tasks.split(","))
    outcome = probe.family.reward.outcome
    settings = EvalSettings(
        env_id=args.env_id, harness=args.harness, sandbox=args.sandbox, policy=args.policy,
        model=getattr(policy, "model", None), suite=probe.suite, suite_hash=suite_hash(tasks),
        tasks=tuple(t.id for t in tasks), k=args.k, seed=args.seed, max_turns=_max_turns(args),
        time_limit_s=args.time_limit)
    out = Path(args.out or f"runs/eval-{args.env_id.split('/')[-1]}-{args.harness}-{args.policy}")
    run = EvalRun.open(out, settings)
    total = len(tasks) * args.k
    workers = None if args.ray is None else _ray_workers(args.ray, make_env, policy, args.jobs)  # refusals first
    where = "" if workers is None else f" on each of {len(workers)} Ray node(s)"
    print(f"{args.env_id}: {len(tasks)} task(s) x k={args.k}, {args.jobs} at once{where}, harness={args.harness}, "
          f"policy={args.policy} -> {out}" + (f" (resuming: {len(run.done)} done)" if run.done else ""), flush=True)
    bar = tqdm(total=total, initial=len(run.done), unit="ep", dynamic_ncols=True)
    shown = {"model_calls": 0} if workers is None else {}  # on Ray the model calls happen on the nodes

    def progress(_trace) -> None:
        traces = list(run.done.values())
        passed = sum(t.reward_components.get(outcome, 0.0) >= 1.0 for t in traces)
        shown.update(pass_rate=f"{passed / len(traces):.2f}",
                     mean_reward=f"{sum(t.reward for t in traces) / len(traces):.3f}")
        bar.set_postfix(shown, refresh=False)
        bar.update(1)

    def on_call() -> None:  # the bar moves while the first episodes sample, not only when one ends
        shown["model_calls"] += 1
        bar.set_postfix(shown)

    try:
        if workers is None:
            asyncio.run(run_eval(run, make_env, policy, args.jobs, progress, on_call))
        else:
            from polar.evaluation.ray_worker import run_eval_on_ray

            lost = functools.partial(bar.write, file=sys.stderr)
            asyncio.run(run_eval_on_ray(run, workers, args.jobs, progress, lost))
    finally:
        bar.close()
        if workers is not None:
            from polar.evaluation.ray_worker import stop_workers

            stop_workers(workers)
    summary = write_outputs(run, outcome)
    _print_summary(summary, out, probe.family.reward)
    return 0


def _shared_path(suite: str | None) -> str | None:
    """A suite given as a folder, made absolute: node workers find it at the same path on their machine."""
    return str(Path(suite).resolve()) if suite and Path(suite).exists() else suite


def _max_turns(args: argparse.Namespace) -> int:
    """`--max-turns`, else the env's own default (one place for it: `polar.envs.polar_env`)."""
    from polar.envs.polar_env import DEFAULT_MAX_TURNS

    return DEFAULT_MAX_TURNS if args.max_turns is None else args.max_turns


def _ray_workers(address: str, make_env, policy, jobs: int) -> list:
    """The node workers of `--ray [ADDRESS]`, each node checked before any episode starts."""
    from polar.evaluation.ray_worker import connect, start_workers

    connect(address or None)
    return start_workers(make_env, policy, jobs)


def _print_summary(summary: dict, out: Path, spec: RewardSpec) -> None:
    """The summary table: each reward component raw and as scored, the elapsed and the summed episode time."""
    from polar.evaluation.stats import INTERVALS, wilson_interval

    low, high = wilson_interval(summary["pass@1"], summary["tasks"])
    rows = [("episodes", f"{summary['episodes']}/{summary['expected_episodes']}")]
    rows += [(key, f"{value:.3f}") for key, value in summary.items() if key.startswith("pass@") and value is not None]
    rows += [("pass@1 95% CI", f"[{low:.3f}, {high:.3f}] over {summary['tasks']} task(s)"),
             ("mean reward", f"{summary['mean_reward']:.3f}  = the scored components, summed and capped at "
                             f"{spec.max_total:g}")]
    for c in spec.components:
        raw, scored = summary["components"].get(c.name, 0.0), summary["components_scored"].get(c.name, 0.0)
        rows += [(f"  {c.name}", f"{scored:.3f}  scored (raw {raw:.3f} x weight {c.weight:g}, capped at {c.cap:g})")]
    rows += [("mean turns", f"{summary['mean_turns']:.1f}"), ("tokens sampled", str(summary["tokens"])),
             ("wall time", f"{summary['wall_time_s']:.1f}s  (episodes' own times summed: "
                           f"{summary['episode_time_s']:.1f}s)")]
    rows += [(f"status {s}", str(n)) for s, n in summary["status_counts"].items() if n]
    width = max(len(k) for k, _ in rows)
    print("\n".join(f"{k:<{width}}  {v}" for k, v in rows))
    print(f"{INTERVALS}.")
    print(f"results: {out / 'results.parquet'}, {out / 'summary.json'}, traces: {out / 'traces.jsonl'}")
    print(f"report:  polar report {out}")


def _trace_records(path: str) -> Iterator[tuple[str, str]]:
    """(where, JSON text) for each trace in a JSONL file or in the `trace` column of a traces Parquet file."""
    if path.endswith(".parquet"):
        import pandas as pd

        for row, text in enumerate(pd.read_parquet(path, columns=["trace"])["trace"], 1):
            yield f"{path}: row {row}", text
        return
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if raw.strip():
                yield f"{path}:{lineno}", raw.decode("utf-8")


def _forged_reward(trace: Any) -> str | None:
    """Why the trace's reward cannot have come from its components under its env's reward spec, or None."""
    from polar.envs.registration import ENVS, env_family

    return trace.reward_unearned(env_family(trace.env_id).reward) if trace.env_id in ENVS else None


def cmd_trace_validate(args: argparse.Namespace) -> int:
    import jsonschema

    from polar.trace import Trace, load_schema

    validator = jsonschema.Draft202012Validator(load_schema())
    bad = good = 0
    for path in args.files:
        try:
            for where, text in _trace_records(path):
                try:
                    data = json.loads(text)
                    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
                    if errors:
                        at = "/".join(map(str, errors[0].path)) or "(top level)"
                        raise ValueError(f"at {at}: {errors[0].message}")
                    if (forged := _forged_reward(Trace.model_validate(data))) is not None:
                        raise ValueError(forged)
                    good += 1
                except RecursionError:
                    bad += 1
                    print(f"{where}: invalid: nested too deeply to be a trace")
                except ValueError as e:
                    bad += 1
                    print(f"{where}: invalid: {str(e)[:500]}")
        except (OSError, ValueError) as e:  # unreadable, not UTF-8, not Parquet
            bad += 1
            reason = "not UTF-8 text" if isinstance(e, UnicodeDecodeError) else getattr(e, "strerror", None) or str(e)
            reason = reason[:300]
            print(f"{path}: cannot read: {reason}")
    print(f"{good} valid, {bad} invalid trace(s)")
    return 1 if bad or not good else 0


def cmd_view(args: argparse.Namespace) -> int:
    from polar.evaluation.viewer import load_tokenizer, open_in_browser, page_name, write_pages
    from polar.trace import Trace

    traces = []
    try:
        for where, text in _trace_records(args.traces):
            try:
                traces.append(Trace.model_validate_json(text))
            except ValueError as e:
                raise PolarError(f"{where}: not a polar.trace/v1 trace ({str(e)[:300]}); "
                                 f"`polar trace validate {args.traces}` lists every problem") from None
    except (OSError, ValueError) as e:  # unreadable, not UTF-8, not Parquet
        raise PolarError(f"cannot read {args.traces}: {e}") from None
    if args.episode:
        traces = [t for t in traces if t.episode_id.startswith(args.episode)]
        if not traces:
            raise PolarError(f"{args.traces} holds no episode whose id starts with {args.episode!r}")
    if not traces:
        raise PolarError(f"{args.traces} holds no traces")
    out = Path(args.out or Path(args.traces).with_name(Path(args.traces).name.split(".")[0] + "-view"))
    index = write_pages(traces, out, title=f"episodes of {args.traces}",
                        tokenizer=load_tokenizer(args.tokenizer) if args.tokenizer else None)
    shown = out / page_name(traces[0].episode_id) if len(traces) == 1 else index
    print(f"{len(traces)} episode page(s): {shown}")
    if not args.no_open and open_in_browser(shown):
        print("opened in your browser")
    return 0


def cmd_harnesses(args: argparse.Namespace) -> int:
    from polar.harnesses import EXTERNAL, HARNESSES, make_harness
    from polar.harnesses.external import is_installed

    if args.install:
        names = EXTERNAL if args.install == ["all"] else args.install
        for name in names:
            harness = make_harness(name)
            if is_installed(harness):
                print(f"{name} {harness.version}: already installed", flush=True)
                continue
            print(f"installing {name} {harness.version} ...", flush=True)
            print(f"  {harness.ensure_installed()}")
        return 0
    for name in HARNESSES:
        harness = make_harness(name)
        state = "built in" if name not in EXTERNAL else ("installed" if is_installed(harness) else "not installed")
        print(f"{name:<16} {harness.version:<10} {state}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="polar", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("envs", help="list the env ids").set_defaults(fn=cmd_envs)

    run = sub.add_parser("run", help="run episodes with a policy and write traces")
    _episode_args(run)
    run.add_argument("--episodes", type=int, default=3)
    run.add_argument("--out", default=None, help="output directory (default runs/<env>-<time>)")
    run.set_defaults(fn=cmd_run)

    ev = sub.add_parser("eval", help="every task x k samples, j at once, resumable; writes results and summary")
    _episode_args(ev)
    ev.add_argument("-k", type=int, default=1, help="samples per task (for pass@k)")
    ev.add_argument("-j", "--jobs", type=int, default=1, help="episodes at once")
    ev.add_argument("--tasks", help="comma-separated task ids (default: the whole suite)")
    ev.add_argument("--out", default=None, help="output directory; rerun the same command to resume")
    ev.add_argument("--strict", action="store_true", help="refuse a suite with any task folder that does not load "
                                                          "(default: those are left out and listed)")
    ev.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                    help="run the episodes on the Ray cluster at ADDRESS (HEAD:6379; alone: the one on this machine), "
                         "one node worker per node, -j episodes at once on each")
    ev.set_defaults(fn=cmd_eval)

    trace = sub.add_parser("trace", help="work with trace files").add_subparsers(dest="trace_command", required=True)
    validate = trace.add_parser("validate", help="check JSONL traces against the polar.trace/v1 schema")
    validate.add_argument("files", nargs="+")
    validate.set_defaults(fn=cmd_trace_validate)

    view = sub.add_parser("view", help="HTML pages of the episodes in a traces file (JSONL or Parquet), and an index")
    view.add_argument("traces", help="traces.jsonl or traces.parquet")
    view.add_argument("--episode", help="only the episode whose id starts with this")
    view.add_argument("--out", help="the folder for the pages (default: TRACES-view beside the file)")
    view.add_argument("--tokenizer", help="show token text with this tokenizer: `local` (the embedded model's) or "
                                          "a Hugging Face folder (default: token ids)")
    view.add_argument("--no-open", action="store_true", help="do not open the pages in a browser")
    view.set_defaults(fn=cmd_view)

    from polar.doctor import add_parser as add_doctor
    from polar.envs.images_command import add_parser as add_images
    from polar.evaluation.admission import add_parser as add_admission
    from polar.evaluation.report import add_parser as add_report
    from polar.leaderboard import add_parser as add_leaderboard
    from polar.training.cli import add_parser as add_train

    add_report(sub)
    add_leaderboard(sub)
    add_train(sub)
    add_images(sub)
    add_admission(sub)

    harnesses = sub.add_parser("harnesses", help="list the harnesses, or install external ones ahead of time")
    harnesses.add_argument("--install", nargs="+", metavar="NAME", help="harness names, or `all`")
    harnesses.set_defaults(fn=cmd_harnesses)

    add_doctor(sub)
    return parser


def _episode_args(parser: argparse.ArgumentParser) -> None:
    from polar.envs.swe.environment import REPOS_HELP, ReposOption

    parser.add_argument("env_id")
    parser.add_argument("--policy", default="local",
                        help="scripted | empty | oracle | openai | vllm | local (default)")
    parser.add_argument("--harness", default="builtin")
    parser.add_argument("--sandbox", default="local",
                        help="local (bubblewrap, default) | docker (--network none) | process (no isolation)")
    parser.add_argument("--suite", default=None, help="a bundled suite name or a directory of tasks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-turns", type=int, default=None,
                        help="model calls before an episode is truncated (default: the env's, 30)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per episode (default: the task's own agent timeout, else 900)")
    parser.add_argument("--replies", help="scripted policy: a JSON file with a list of replies")
    parser.add_argument("--model", help="openai and vllm policies: the model name (vllm: default the one served); "
                        "local: a model folder (e.g. a `polar train grpo` checkpoint) or a GGUF file")
    parser.add_argument("--base-url", help="openai and vllm policies: the server's base URL, e.g. "
                        "http://127.0.0.1:8471/v1 (default $OPENAI_BASE_URL)")
    parser.add_argument("--max-new-tokens", type=int, default=160, help="local and vllm policies: tokens per reply")
    parser.add_argument("--temperature", type=float, default=0.7,
                        help="local and vllm policies: sampling temperature")
    parser.add_argument("--repos", action=ReposOption, metavar="DIR", help=REPOS_HELP)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except PolarError as e:
        print(f"polar: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
