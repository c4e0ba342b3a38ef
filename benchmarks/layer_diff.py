"""A container's changes against its image: polar's read of a btrfs send stream vs the engine's diff.

A Terminal-v0 grade in docker reads the agent's container's changes twice (the baseline and the final state). The
engine's diff (`GET /containers/{id}/changes`) walks the whole image under the btrfs storage driver; polar snapshots
the two layers read-only and reads what a send stream between them names (`polar.envs.sandbox.layer_diff`). Both
read the same container, which holds a Terminal-v0 oracle's worth of changes; rounds alternate the contenders, and
the answers are checked equal first. Also reported: dockerd's CPU seconds per call, read from /proc. Needs a Docker
engine on btrfs (`bash scripts/docker.sh`) and root.

    python benchmarks/layer_diff.py [--quick]
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

from timing import options, rotated, summary, table, write

from polar.envs.sandbox import make_backend
from polar.envs.sandbox.images import build_base_image
from polar.envs.sandbox.layer_diff import container_changes
from polar.protocols import SandboxSpec

POLAR, ENGINE = "polar (btrfs send)", "the engine's diff"
CHANGES = ("mkdir -p /app/out && seq 1 2000 > /app/out/numbers.csv && cp -r /usr/share/doc/bash /app/doc && "
           "git init -q /app/repo 2>/dev/null; echo done")


def dockerd_cpu_s() -> float:
    pid = subprocess.run(["pgrep", "-xo", "dockerd"], capture_output=True, text=True).stdout.strip()
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def main() -> None:
    args = options(__doc__.splitlines()[0])
    rounds, per_round = (2, 2) if args.quick else (6, 5)
    build_base_image()
    backend = make_backend("docker")
    if backend.btrfs_root is None:
        raise SystemExit(f"the Docker engine keeps containers on {backend.driver}, not btrfs: run "
                         "`bash scripts/docker.sh`")
    sandbox = await backend.start(SandboxSpec())
    try:
        assert (await sandbox.exec(CHANGES)).output.endswith("done\n")
        client, container = sandbox.client, sandbox.container_id
        contenders = {POLAR: lambda: container_changes(client, container, backend.btrfs_root),
                      ENGINE: lambda: client.api.diff(container)}
        answers = {name: sorted((c["Path"], c["Kind"]) for c in call()) for name, call in contenders.items()}
        assert answers[POLAR] == answers[ENGINE], "the two diffs differ"
        samples: dict[str, list[int]] = {name: [] for name in contenders}
        cpu: dict[str, float] = dict.fromkeys(contenders, 0.0)
        for r in range(rounds):
            for name in rotated(list(contenders), r):
                for _ in range(per_round):
                    before, start = dockerd_cpu_s(), time.perf_counter_ns()
                    contenders[name]()
                    samples[name].append(time.perf_counter_ns() - start)
                    cpu[name] += dockerd_cpu_s() - before
    finally:
        await sandbox.stop()
    stats = {name: {**summary(s, "ms"), "dockerd_cpu_s_per_call": round(cpu[name] / len(s), 3)}
             for name, s in samples.items()}
    base = stats[POLAR]["median_ms"]
    print(table(["contender", "median ms", "p90 ms", "dockerd CPU s / call", "÷ polar"],
                [[n, s["median_ms"], s["p90_ms"], s["dockerd_cpu_s_per_call"], f"{s['median_ms'] / base:.1f}×"]
                 for n, s in stats.items()]))
    write("layer_diff", args.out, {"quick": args.quick, "paths_changed": len(answers[POLAR]), "contenders": stats})


if __name__ == "__main__":
    asyncio.run(main())
