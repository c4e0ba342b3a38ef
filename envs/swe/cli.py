"""`polar images build --suite S`: the docker images of a SWE-bench suite's repository environments."""

from __future__ import annotations

import argparse
import time
from typing import Any


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


def add_parser(subparsers: Any) -> None:
    """Register `polar images build` on the `polar` command's subparsers."""
    images = subparsers.add_parser("images", help="docker images of task environments").add_subparsers(
        dest="images_command", required=True)
    build = images.add_parser("build", help="build the images a suite needs (cached in the Docker engine)")
    build.add_argument("--suite", default="swe-mini", help="a bundled suite, an instances file or a dataset")
    build.set_defaults(fn=cmd_images_build)
