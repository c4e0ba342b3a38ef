"""Command round trip: polar's local sandbox (bubblewrap) vs mini-swe-agent's `LocalEnvironment`.

polar keeps one shell per sandbox and sends each command down a pipe; mini-swe-agent starts a new
`bash -c` per command. Both run here in one asyncio loop, the way the env drives a sandbox: polar's
`await sandbox.exec(cmd)` is timed inside the loop, the peers' blocking calls in the same coroutine.
Rounds alternate the contenders (each goes first in turn) so load on a shared machine hits them all alike.
polar's unisolated `process` backend and a bare `subprocess.run` are reference rows.

    python benchmarks/sandbox_roundtrip.py [--quick]
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import warnings

from timing import atime_calls, options, rotated, summary, table, time_calls, write

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")  # mini-swe-agent prints a banner on import otherwise
from minisweagent.environments.local import LocalEnvironment  # noqa: E402

from polar.envs.sandbox import make_backend  # noqa: E402
from polar.protocols import SandboxSpec  # noqa: E402

COMMANDS = ["true", "echo hello", "/bin/true"]  # the last forks a process even in polar's shell
POLAR = "polar local (bwrap)"
MINI = "mini-swe-agent LocalEnvironment"


async def main() -> None:
    args = options(__doc__.splitlines()[0])
    rounds, per_round = (5, 10) if args.quick else (40, 20)
    local = await make_backend("local").start(SandboxSpec())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the process backend warns that it isolates nothing; we know
        process = await make_backend("process").start(SandboxSpec())
    mini = LocalEnvironment()
    try:
        for cmd in COMMANDS:  # each contender really runs the command: same output, exit code 0
            outputs = [(await local.exec(cmd)).output, (await process.exec(cmd)).output,
                       mini.execute({"command": cmd})["output"],
                       subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout]
            assert len(set(outputs)) == 1, f"contenders disagree on {cmd!r}: {outputs}"

        samples: dict[tuple[str, str], list[int]] = {}
        for r in range(rounds):
            for cmd in COMMANDS:
                contenders = {  # name: (call, whether it returns an awaitable)
                    POLAR: (lambda cmd=cmd: local.exec(cmd), True),
                    "polar process (no isolation)": (lambda cmd=cmd: process.exec(cmd), True),
                    MINI: (lambda cmd=cmd: mini.execute({"command": cmd}), False),
                    "subprocess.run(shell=True)":
                        (lambda cmd=cmd: subprocess.run(cmd, shell=True, capture_output=True), False),
                }
                for name in rotated(list(contenders), r):
                    fn, awaited = contenders[name]
                    got = await atime_calls(fn, per_round) if awaited else time_calls(fn, per_round)
                    samples.setdefault((cmd, name), []).extend(got)
    finally:
        await local.stop()
        await process.stop()

    figures: dict[str, dict] = {}
    rows = []
    for cmd in COMMANDS:
        stats = {name: summary(s) for (c, name), s in samples.items() if c == cmd}
        base = stats[POLAR]["median_us"]
        for name, s in stats.items():
            rows.append([f"`{cmd}`", name, s["median_us"], s["p90_us"], f"{s['median_us'] / base:.1f}×"])
        ratio = round(stats[MINI]["median_us"] / base, 1)
        figures[cmd] = {"contenders": stats, "mini_over_polar_local": ratio}
    print(table(["command", "contender", "median µs", "p90 µs", "÷ polar local"], rows))
    print()
    for cmd in COMMANDS:
        ratio = figures[cmd]["mini_over_polar_local"]
        print(f"`{cmd}`: mini-swe-agent / polar local = {ratio}× (goal ≥ 10×)")
    path = write("sandbox_roundtrip", args.out, {"quick": args.quick, "rounds": rounds,
                                                 "calls_per_round": per_round, "commands": figures})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    asyncio.run(main())
