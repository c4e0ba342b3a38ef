"""What every benchmark here shares: per-call timers, median/p90 summaries, the Markdown table, the JSON file.

The machines these run on are shared and noisy, so a benchmark never trusts one absolute time: it measures
polar and a peer in the same run, in alternating rounds, and reports the ratio of their medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("results")


def options(description: str) -> argparse.Namespace:
    """The command line every benchmark takes: `--quick` for a CI smoke run, `--out` for the JSON path."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="few iterations (a smoke run, under 20 s)")
    parser.add_argument("--out", type=Path, help="JSON path (default: benchmarks/results/<name>.json)")
    return parser.parse_args()


def time_calls(fn: Callable[[], Any], n: int) -> list[int]:
    """Nanoseconds of each of `n` calls of `fn`."""
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - start)
    return samples


async def atime_calls(fn: Callable[[], Awaitable[Any]], n: int) -> list[int]:
    """Nanoseconds of each of `n` awaited calls of `fn`, timed inside the running loop."""
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        await fn()
        samples.append(time.perf_counter_ns() - start)
    return samples


def rotated(names: list[str], round_index: int) -> list[str]:
    """The contenders in the order they run in round `round_index`: each goes first in turn."""
    k = round_index % len(names)
    return names[k:] + names[:k]


def summary(samples_ns: list[int], unit: str = "us") -> dict[str, float | int]:
    """Median and p90 (nearest rank) in `unit` ("us" or "ms"), and the sample count."""
    scale = {"us": 1e3, "ms": 1e6}[unit]
    ordered = sorted(samples_ns)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    median = statistics.median(ordered)
    return {f"median_{unit}": round(median / scale, 1), f"p90_{unit}": round(p90 / scale, 1),
            "n": len(ordered)}


def table(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    """Enough about the machine to tell two result files apart."""
    return {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "loadavg_1m": round(os.getloadavg()[0], 2)}


def write(name: str, out: Path | None, figures: dict[str, Any]) -> Path:
    path = out or RESULTS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"benchmark": name, "machine": machine(), **figures}, indent=2) + "\n")
    return path
