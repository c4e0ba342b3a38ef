"""Priority job scheduling with dependencies."""

import heapq
from typing import Any

Job = dict[str, Any]


def _validate(jobs: list[Job]) -> tuple[dict[str, Job], list[str]]:
    """Return (jobs by name, a topological order); raise ValueError on invalid input."""
    by_name: dict[str, Job] = {}
    for job in jobs:
        name = job["name"]
        if name in by_name:
            raise ValueError(f"duplicate job {name!r}")
        duration = job["duration"]
        if not isinstance(duration, int) or isinstance(duration, bool) or duration < 1:
            raise ValueError(f"bad duration for {name!r}")
        by_name[name] = job
    indegree = {name: 0 for name in by_name}
    dependents: dict[str, list[str]] = {name: [] for name in by_name}
    for name, job in by_name.items():
        for dep in set(job.get("deps", ())):
            if dep not in by_name:
                raise ValueError(f"{name!r} depends on unknown job {dep!r}")
            indegree[name] += 1
            dependents[dep].append(name)
    order = []
    stack = [name for name, d in indegree.items() if d == 0]
    while stack:
        name = stack.pop()
        order.append(name)
        for nxt in dependents[name]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                stack.append(nxt)
    if len(order) != len(by_name):
        raise ValueError("dependency cycle")
    return by_name, order


def simulate(jobs: list[Job], workers: int) -> dict[str, tuple[int, int, int]]:
    """Return {name: (worker, start, end)} for a simulated run."""
    if workers < 1:
        raise ValueError("workers must be >= 1")
    by_name, _ = _validate(jobs)
    waiting = {name: len(set(job.get("deps", ()))) for name, job in by_name.items()}
    dependents: dict[str, list[str]] = {name: [] for name in by_name}
    for name, job in by_name.items():
        for dep in set(job.get("deps", ())):
            dependents[dep].append(name)

    def ready_key(name: str) -> tuple[int, str]:
        return (-by_name[name].get("priority", 0), name)

    ready = [ready_key(n) for n, w in waiting.items() if w == 0]
    heapq.heapify(ready)
    free = list(range(workers))
    running: list[tuple[int, int, str]] = []  # (end, worker, name)
    result: dict[str, tuple[int, int, int]] = {}
    now = 0
    while len(result) < len(by_name) or running:
        while running and running[0][0] == now:
            _, worker, name = heapq.heappop(running)
            heapq.heappush(free, worker)
            for nxt in dependents[name]:
                waiting[nxt] -= 1
                if waiting[nxt] == 0:
                    heapq.heappush(ready, ready_key(nxt))
        while free and ready:
            _, name = heapq.heappop(ready)
            worker = heapq.heappop(free)
            end = now + by_name[name]["duration"]
            result[name] = (worker, now, end)
            heapq.heappush(running, (end, worker, name))
        if not running:
            break
        now = running[0][0]
    return result


def makespan(jobs: list[Job], workers: int) -> int:
    """Return the finishing time of the last job."""
    return max((end for _, _, end in simulate(jobs, workers).values()), default=0)


def critical_path(jobs: list[Job]) -> tuple[int, list[str]]:
    """Return the longest dependency chain (total duration, names)."""
    by_name, order = _validate(jobs)
    dependents: dict[str, list[str]] = {name: [] for name in by_name}
    for name, job in by_name.items():
        for dep in set(job.get("deps", ())):
            dependents[dep].append(name)
    # tail[n]: the longest total duration of a chain starting at n.
    tail: dict[str, int] = {}
    for name in reversed(order):
        tail[name] = by_name[name]["duration"] + max((tail[d] for d in dependents[name]), default=0)
    if not tail:
        return 0, []
    best = max(tail.values())
    current = min(n for n, t in tail.items() if t == best)
    chain = [current]
    remaining = best - by_name[current]["duration"]
    while remaining:
        current = min(d for d in dependents[current] if tail[d] == remaining)
        chain.append(current)
        remaining -= by_name[current]["duration"]
    return best, chain
