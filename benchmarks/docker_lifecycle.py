"""A docker sandbox's start and stop: polar's, with its layers emptied before dockerd removes them, vs the same
with the removal left to dockerd, and a bare `docker run -d` then `docker rm -f`.

Every grade of Terminal-v0 and SWE-v0 starts and stops fresh containers (a Terminal-v0 grade three), so this is
most of what a docker episode costs beyond the work itself. dockerd's btrfs driver looks at every file of a layer
for a nested subvolume before it deletes the layer; polar first has the kernel drop the layer whole
(`polar.envs.sandbox.docker._hollow_layers`). Rounds alternate the contenders. Needs a Docker engine on btrfs
(`bash scripts/docker.sh`).

    python benchmarks/docker_lifecycle.py [--quick]
"""

from __future__ import annotations

import asyncio
import subprocess
import time

from timing import options, rotated, summary, table, write

from polar.envs.sandbox import make_backend
from polar.envs.sandbox.images import build_base_image
from polar.protocols import SandboxSpec

POLAR, DOCKERD, CLI = "polar (layers emptied first)", "polar, removal left to dockerd", "docker run -d, docker rm -f"


async def main() -> None:
    args = options(__doc__.splitlines()[0])
    rounds, per_round = (2, 2) if args.quick else (10, 5)
    image = build_base_image()
    hollowing, plain = make_backend("docker"), make_backend("docker")
    if hollowing.btrfs_root is None:
        raise SystemExit(f"the Docker engine keeps containers on {hollowing.driver}, not btrfs: run "
                         "`bash scripts/docker.sh`")
    plain.btrfs_root = None

    async def polar_sandbox(backend) -> tuple[int, int]:
        start = time.perf_counter_ns()
        sandbox = await backend.start(SandboxSpec())
        started = time.perf_counter_ns()
        await sandbox.stop()
        return started - start, time.perf_counter_ns() - started

    async def cli() -> tuple[int, int]:
        start = time.perf_counter_ns()
        container = subprocess.run(["docker", "run", "-d", "--init", "--network", "none", image, "sleep", "infinity"],
                                   check=True, capture_output=True, text=True).stdout.strip()
        started = time.perf_counter_ns()
        subprocess.run(["docker", "rm", "-f", container], check=True, capture_output=True)
        return started - start, time.perf_counter_ns() - started

    contenders = {POLAR: lambda: polar_sandbox(hollowing), DOCKERD: lambda: polar_sandbox(plain), CLI: cli}
    samples: dict[str, dict[str, list[int]]] = {n: {"start": [], "stop": [], "both": []} for n in contenders}
    for r in range(rounds):
        for name in rotated(list(contenders), r):
            for _ in range(per_round):
                up, down = await contenders[name]()
                for part, ns in (("start", up), ("stop", down), ("both", up + down)):
                    samples[name][part].append(ns)
    stats = {name: {part: summary(s, "ms") for part, s in parts.items()} for name, parts in samples.items()}
    base = stats[POLAR]["both"]["median_ms"]
    print(table(["contender", "start ms (median)", "stop ms (median)", "both ms (median)", "÷ polar"],
                [[n, s["start"]["median_ms"], s["stop"]["median_ms"], s["both"]["median_ms"],
                  f"{s['both']['median_ms'] / base:.2f}×"] for n, s in stats.items()]))
    write("docker_lifecycle", args.out, {"quick": args.quick, "image": image, "contenders": stats})


if __name__ == "__main__":
    asyncio.run(main())
