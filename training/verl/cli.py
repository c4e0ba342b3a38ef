"""`polar train data` (verl dataset rows for an env's tasks) and `polar train verl` (verl's trainer, configured).

`add_parser(subparsers)` takes the subparsers of the `polar train` command group and adds both commands.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from polar.errors import PolarError

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
AGENT_LOOP_YAML = CONFIGS / "agent_loop.yaml"
AGENT_LOOP_KEY = "actor_rollout_ref.rollout.agent.agent_loop_config_path"
DATA_KEYS = ("data.train_files", "data.val_files")
MODEL_KEY = "actor_rollout_ref.model.path"
NO_GPU = ("no GPU: verl's trainer needs a CUDA GPU (torch sees none); on the CPU, train with TRL "
          "(polar.training.trl.grpo_trainer), or check the launch with --dry-run")


def add_parser(subparsers: Any) -> None:
    data = subparsers.add_parser("data", help="write verl dataset rows (parquet), one per task of an env's suite")
    data.add_argument("env_id")
    data.add_argument("-o", "--out", required=True, help="the parquet file to write")
    data.add_argument("--suite", default=None, help="a bundled suite name or a directory of tasks")
    data.add_argument("--tasks", default=None, help="comma-separated task ids (default: the whole suite)")
    data.add_argument("--harness", default="builtin")
    data.add_argument("--sandbox", default="local", help="local (bubblewrap) | docker | process")
    data.add_argument("--seed", type=int, default=0, help="row i gets seed + i")
    data.add_argument("--max-turns", type=int, default=30)
    data.add_argument("--time-limit", type=float, default=900.0, help="seconds per episode")
    data.set_defaults(fn=cmd_data)

    verl = subparsers.add_parser("verl", help="launch verl's GRPO/PPO trainer (python -m verl.trainer.main_ppo)")
    verl.add_argument("config", help=f"a config file, or the name of one in {CONFIGS} (grpo_code, grpo_swe)")
    verl.add_argument("overrides", nargs="*", help="Hydra overrides (key=value), applied after the config's")
    verl.add_argument("--dry-run", action="store_true", help="print the command line instead of running it")
    verl.set_defaults(fn=cmd_verl)


def cmd_data(args: argparse.Namespace) -> int:
    from polar.training.verl.data import dataset_rows, write_rows

    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None
    rows = dataset_rows(args.env_id, suite=args.suite, tasks=tasks, harness=args.harness, sandbox=args.sandbox,
                        seed=args.seed, max_turns=args.max_turns, time_limit_s=args.time_limit)
    out = Path(args.out)
    write_rows(rows, out)
    print(f"wrote {len(rows)} rows ({args.env_id}, harness={args.harness}, sandbox={args.sandbox}) to {out}")
    return 0


def cmd_verl(args: argparse.Namespace) -> int:
    command = verl_command(args.config, args.overrides)
    if not args.dry_run and gpu_count() == 0:  # else Ray waits forever for a GPU worker it cannot schedule
        raise PolarError(NO_GPU)
    check_data(command, require=not args.dry_run)
    if args.dry_run:
        print(shlex.join(command))
        return 0
    model = model_path(command)
    if model is not None and not Path(model).expanduser().is_dir():
        print(f"polar: {MODEL_KEY}={model} is not a local folder: verl fetches it from the Hugging Face hub "
              f"(pass {MODEL_KEY}=DIR to use a local copy)", flush=True)
    print(shlex.join(command), flush=True)
    return subprocess.run(command).returncode


def gpu_count() -> int:
    """The GPUs torch can use (CUDA or ROCm); 0 without torch."""
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count()


def model_path(command: list[str]) -> str | None:
    """The model the command trains (`actor_rollout_ref.model.path`), or None when it names none."""
    paths = [arg.partition("=")[2].strip("'\"") for arg in command if arg.startswith(f"{MODEL_KEY}=")]
    return paths[-1] if paths else None


def load_config(config: str) -> dict[str, Any]:
    """A config file's `overrides` mapping (dotted key -> value); `config` is a path or a bundled name."""
    import yaml

    path = Path(config)
    if not path.is_file():
        bundled = CONFIGS / (config if config.endswith((".yaml", ".yml")) else f"{config}.yaml")
        if not bundled.is_file():
            names = sorted(p.stem for p in CONFIGS.glob("grpo_*.yaml"))
            raise PolarError(f"no config {config!r}: not a file, nor one of {', '.join(names)} in {CONFIGS}")
        path = bundled
    loaded = yaml.safe_load(path.read_text()) or {}
    overrides = loaded.get("overrides") if isinstance(loaded, dict) else None
    if not isinstance(overrides, dict):
        raise PolarError(f"{path}: a config needs an `overrides:` mapping of dotted Hydra keys to values")
    return overrides


def hydra_value(value: Any) -> str:
    """A YAML value as Hydra override syntax."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    text = str(value)
    if text == "" or (isinstance(value, str) and any(c in text for c in " ,[]{}()'\"=:\\$")):
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return text


def verl_command(config: str, overrides: list[str], python: str = sys.executable) -> list[str]:
    """`python -m verl.trainer.main_ppo` with the config's overrides, then the user's (same key: the user's wins).

    The agent-loop registry (`configs/agent_loop.yaml`, absolute) is added unless either sets it.
    """
    items = {key: f"{key}={hydra_value(value)}" for key, value in load_config(config).items()}
    extra = []
    for override in overrides:
        key, sep, _ = override.partition("=")
        if not sep:
            raise PolarError(f"override {override!r} is not key=value")
        if key in items:
            items[key] = override
        else:
            extra.append(override)
    if AGENT_LOOP_KEY not in items and not any(o.startswith(f"{AGENT_LOOP_KEY}=") for o in extra):
        items[AGENT_LOOP_KEY] = f"{AGENT_LOOP_KEY}={AGENT_LOOP_YAML}"
    return [python, "-m", "verl.trainer.main_ppo", *items.values(), *extra]


def data_files(command: list[str]) -> list[str]:
    """The local files `data.train_files` and `data.val_files` name in a command line."""
    files = []
    for arg in command:
        key, _, value = arg.partition("=")
        if key in DATA_KEYS:
            files += [f.strip().strip("'\"") for f in value.strip("[]").split(",") if f.strip()]
    return files


def check_data(command: list[str], *, require: bool) -> None:
    """Check every row of the dataset files the command names; with `require`, a missing file is an error."""
    from polar.training.verl.data import check_rows, read_rows

    for name in dict.fromkeys(data_files(command)):
        path = Path(name).expanduser()
        if path.is_file():
            check_rows(read_rows(path), source=str(path))
        elif require and "://" not in name:
            raise PolarError(f"no dataset at {path}; write one with `polar train data ENV_ID -o {name}`")
