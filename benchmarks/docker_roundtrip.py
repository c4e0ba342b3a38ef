"""Command round trip in the docker sandbox: polar's persistent exec channel vs one `docker exec` per command.

Peers in the same run: a bare `docker exec <container> true` per command (what a naive backend does), and
mini-swe-agent's `DockerEnvironment`, which also starts one `docker exec` per command. Rounds alternate the
contenders. Needs a Docker engine (`bash scripts/docker.sh`) and `pip install mini-swe-agent`.

    python benchmarks/docker_roundtrip.py [--quick]
"""

from __future__ import annotations

import asyncio
import os
import subprocess

from timing import atime_calls, options, rotated, summary, table, time_calls, write

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
from minisweagent.environments.docker import DockerEnvironment  # noqa: E402

from polar.envs.sandbox import make_backend  # noqa: E402
from polar.envs.sandbox.images import build_base_image  # noqa: E402
from polar.protocols import SandboxSpec  # noqa: E402

POLAR, EXEC, MINI = "polar docker (persistent channel)", "docker exec per command", "mini-swe-agent DockerEnvironment"


async def main() -> None:
    args = options(__doc__.splitlines()[0])
    rounds, per_round = (3, 5) if args.quick else (10, 20)
    image = build_base_image()
    sandbox = await make_backend("docker").start(SandboxSpec())
    container = sandbox.container_id
    mini = DockerEnvironment(image=image, run_args=["--rm", "--network", "none"])
    try:
        contenders = {
            POLAR: (lambda: sandbox.exec("true"), True),
            EXEC: (lambda: subprocess.run(["docker", "exec", container, "true"], check=True), False),
            MINI: (lambda: mini.execute({"command": "true"}), False),
        }
        samples: dict[str, list[int]] = {}
        for r in range(rounds):
            for name in rotated(list(contenders), r):
                fn, awaited = contenders[name]
                got = await atime_calls(fn, per_round) if awaited else time_calls(fn, per_round)
                samples.setdefault(name, []).extend(got)
    finally:
        await sandbox.stop()
        mini.cleanup()
    stats = {name: summary(s, "ms") for name, s in samples.items()}
    base = stats[POLAR]["median_ms"]
    print(table(["contender", "median ms", "p90 ms", "÷ polar"],
                [[n, s["median_ms"], s["p90_ms"], f"{s['median_ms'] / base:.0f}×"] for n, s in stats.items()]))
    write("docker_roundtrip", args.out, {"quick": args.quick, "command": "true", "contenders": stats})


if __name__ == "__main__":
    asyncio.run(main())
