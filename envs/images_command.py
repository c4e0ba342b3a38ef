"""`polar images build --suite S`: the docker images a suite's tasks run on, built (or found) ahead of time.

A SWE-bench suite needs its repository environments' images; any other suite, each task's sandbox image on the
docker backend (a Terminal task's Dockerfile, or polar's offline base image that Code and Web tasks run on)."""

from __future__ import annotations

import argparse
import time
from typing import Any


def cmd_images_build(args: argparse.Namespace) -> int:
    """Build (or find cached) every docker image the suite's tasks run on; the family is found by loading the suite."""
    from polar.envs.registration import SWE, find_env

    env_id, tasks = find_env(args.suite)
    return build_swe_images(tasks, args.suite) if env_id == SWE else build_task_images(env_id, tasks, args.suite)


def build_task_images(env_id: str, tasks: list[Any], suite: str) -> int:
    """The image of each task's docker sandbox (`DockerBackend.image_for`), one line per distinct image."""
    from polar.envs.registration import env_family
    from polar.envs.sandbox import make_backend
    from polar.envs.sandbox.images import image_exists
    from polar.errors import SandboxError

    family, backend = env_family(env_id)(), make_backend("docker")
    print(f"{suite} ({env_id}): the docker images of {len(tasks)} task(s)", flush=True)
    images: dict[str, int] = {}
    for task in tasks:
        started = time.monotonic()
        image = backend.image_for(family.sandbox_spec(task, "docker"))
        if not image_exists(image):
            raise SandboxError(f"{task.id}: its image {image} is not in the Docker engine, and the task has no "
                               f"Dockerfile to build it from: run `docker pull {image}` where a registry is reachable")
        if image not in images:
            print(f"{image}  ({time.monotonic() - started:.1f}s)", flush=True)
        images[image] = images.get(image, 0) + 1
    print(f"{len(images)} image(s) ready for {len(tasks)} task(s) of {suite}")
    return 0


def build_swe_images(tasks: list[Any], suite: str) -> int:
    """The docker image of every repository environment a SWE-bench suite needs (official images are pulled by
    their own tooling, not here)."""
    from tqdm import tqdm

    from polar.envs.swe.environment import official_image
    from polar.envs.swe.family import SweFamily

    family = SweFamily()
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
    print(f"{len(needed)} image(s) ready for {len(tasks)} instance(s) of {suite}")
    return 0


def cmd_images_pull(args: argparse.Namespace) -> int:
    """Pull the official evaluation image of every instance of a SWE-bench suite that the engine lacks."""
    from tqdm import tqdm

    from polar.envs.sandbox.images import image_exists
    from polar.envs.swe.environment import official_names, pull_official
    from polar.envs.swe.family import SweFamily

    tasks = SweFamily().load_tasks(args.suite)
    missing = [t for t in tasks if not any(image_exists(name) for name in official_names(t))]
    print(f"{args.suite}: {len(tasks) - len(missing)} of {len(tasks)} official image(s) already in the engine",
          flush=True)
    for task in missing:
        with tqdm(unit="B", unit_scale=True, dynamic_ncols=True, desc=task.instance_id) as bar:
            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            image = pull_official(task, args.registry, progress)
        print(f"{image}", flush=True)
    print(f"{len(tasks)} official image(s) ready for {args.suite}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Register `polar images build` on the `polar` command's subparsers."""
    images = subparsers.add_parser("images", help="docker images of task environments").add_subparsers(
        dest="images_command", required=True)
    build = images.add_parser("build", help="build the images a suite needs (cached in the Docker engine)")
    build.add_argument("--suite", default="swe-mini", help="a bundled suite (code-mini, swe-mini, terminal-mini, "
                                                          "web-mini, ...), a folder or file of tasks, or a dataset")
    build.set_defaults(fn=cmd_images_build)
    pull = images.add_parser("pull", help="pull the official evaluation images of a SWE-bench suite (resumable: "
                                          "layers already fetched are kept)")
    pull.add_argument("--suite", required=True, help="a SWE-bench suite: an instances file or a dataset")
    pull.add_argument("--registry", help="HOST[:PORT] of a registry that serves them (default: the engine's own); "
                                         "SWE-v0 pulls on demand from $POLAR_IMAGE_REGISTRY when it is set")
    pull.set_defaults(fn=cmd_images_pull)
