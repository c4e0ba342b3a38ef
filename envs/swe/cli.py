"""`polar images build --suite S`, and the SWE-bench half of `polar tasks admit SUITE --sandbox S`."""

from __future__ import annotations

import argparse
import time
from typing import Any

from polar.tasks import select_tasks


def cmd_images_build(args: argparse.Namespace) -> int:
    """Build (or find cached) the docker image of every repository environment the suite needs."""
    from tqdm import tqdm

    from polar.envs.swe.environment import official_image
    from polar.envs.swe.family import SweFamily

    family = SweFamily()
    tasks = family.load_tasks(args.suite)
    needed = {}
    for task in tasks:
        if official_image(task) is None:
            environment = family.environment(task)
            needed[environment.key] = environment
    bar = tqdm(total=len(needed), unit="image", dynamic_ncols=True)
    for environment in needed.values():
        bar.set_description(environment.repo)
        started = time.monotonic()
        image = environment.build_image()
        bar.write(f"{image}  ({time.monotonic() - started:.1f}s)")
        bar.update(1)
    bar.close()
    print(f"{len(needed)} image(s) ready for {len(tasks)} instance(s) of {args.suite}")
    return 0


def admit_swe_suite(tasks: list[Any], suite: str, sandbox: str, jobs: int, wanted: list[str] | None = None) -> int:
    """Grade every instance of `tasks` (the suite, loaded) for real: gold resolves, empty and test-sabotaging
    patches do not (`polar tasks admit` on a SWE-bench suite); the exit status is 0 when all are admitted."""
    import asyncio

    from tqdm import tqdm

    from polar.envs.sandbox import make_backend
    from polar.envs.swe.admission import Admission, admit_all
    from polar.envs.swe.family import SweFamily

    family = SweFamily()
    tasks = select_tasks(tasks, wanted)
    backend = make_backend(sandbox)
    bar = tqdm(total=len(tasks), unit="instance", dynamic_ncols=True)
    failed = 0

    def progress(outcome: Admission) -> None:
        nonlocal failed
        failed += not outcome.admitted
        if not outcome.admitted:
            bar.write(f"REJECTED {outcome.instance_id}: " + "; ".join(outcome.reasons))
        bar.set_postfix(rejected=failed)
        bar.update(1)

    try:
        results = asyncio.run(admit_all(family, tasks, backend, jobs, progress))
    finally:
        bar.close()
    admitted = sum(r.admitted for r in results)
    print(f"{admitted}/{len(results)} instance(s) of {suite} admitted in the {sandbox} sandbox")
    return 0 if admitted == len(results) else 1


def add_parser(subparsers: Any) -> None:
    """Register `polar images build` on the `polar` command's subparsers."""
    images = subparsers.add_parser("images", help="docker images of task environments").add_subparsers(
        dest="images_command", required=True)
    build = images.add_parser("build", help="build the images a suite needs (cached in the Docker engine)")
    build.add_argument("--suite", default="swe-mini", help="a bundled suite, an instances file or a dataset")
    build.set_defaults(fn=cmd_images_build)
