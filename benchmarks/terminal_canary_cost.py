"""What the canary costs at grading time: polar/Terminal-v0's grade with its two runs on snapshots of the final state
(`grade`: the artefact replayed in two fresh sandboxes, one run with a must-fail canary) against one run of the
tests in the agent's own sandbox (what grading did before, and still does where no canary can be placed), measured
in one run.

For each task of `terminal-mini` and each sandbox, the reference solution is put in a fresh sandbox of the task
(its files written, its commands run, its processes then killed) twice: one is graded the two-run way, the other
the one-run way, the one going first alternating between rounds. Reported: the median grading time of each, and
their ratio.

    python benchmarks/terminal_canary_cost.py [--quick]
"""

from __future__ import annotations

import asyncio
import posixpath
import shlex
import time
from typing import Any

from timing import options, rotated, summary, table, write

from polar.envs.sandbox import make_backend
from polar.envs.terminal.family import TerminalFamily
from polar.protocols import RunCommand, WriteFile
from polar.tasks.harbor import load_suite

WAYS = ["two runs, with canary", "one run, no canary"]


async def solved(family: TerminalFamily, task: Any, backend: Any) -> tuple[Any, Any]:
    """A fresh sandbox of `task` with its reference solution done and its processes reset, and its setup state."""
    sandbox = await backend.start(family.sandbox_spec(task, backend.name))
    state = (await family.setup(task, sandbox)).state
    await sandbox.mark_processes()
    for step in task.reference_solution():
        if isinstance(step, WriteFile):  # an absolute path (/solution/...), else relative to the workdir
            path = step.path if step.path.startswith("/") else f"{task.workdir}/{step.path}"
            await sandbox.exec(f"mkdir -p {shlex.quote(posixpath.dirname(path))}", timeout=60)
            await sandbox.write(path, step.content)
        elif isinstance(step, RunCommand):
            await sandbox.exec(f"cd {shlex.quote(task.workdir)} && {step.command}", timeout=task.agent_timeout_s)
    await sandbox.reset_processes()
    return sandbox, state


async def graded(way: str, family: TerminalFamily, task: Any, backend: Any) -> int:
    """Nanoseconds `way` took to grade the solved task; stops the script when the reward is not 1."""
    sandbox, state = await solved(family, task, backend)
    try:
        start = time.perf_counter_ns()
        if way == WAYS[0]:
            grade = await family.grade(task, sandbox, backend, state)
        else:
            _, final = await family._changes(task, sandbox, state)  # the artefact, which the one-run grade records
            grade = await family._changed_what_tests_run(task, sandbox, state, final, canaried=False) or \
                await family._run_tests(task, sandbox, state)  # the checks, then the tests, as grade's one run
        took = time.perf_counter_ns() - start
    finally:
        await sandbox.stop()
    if grade.reward(family.reward) != 1.0:
        raise SystemExit(f"{task.id} ({way}, {backend.name}): {grade.error or grade.tampered or grade.log[-1000:]}")
    return took


def main() -> None:
    args = options(__doc__.splitlines()[0])
    family, rows, figures = TerminalFamily(), [], {}
    tasks = load_suite("terminal-mini")[:4] if args.quick else load_suite("terminal-mini")
    for sandbox in ("local", "docker"):
        backend, samples = make_backend(sandbox), {way: [] for way in WAYS}
        for i, task in enumerate(tasks):
            for way in rotated(WAYS, i):
                samples[way].append(asyncio.run(graded(way, family, task, backend)))
        stats = {way: summary(s, "ms") for way, s in samples.items()}
        ratio = stats[WAYS[0]]["median_ms"] / stats[WAYS[1]]["median_ms"]
        figures[sandbox] = {**stats, "ratio_of_medians": round(ratio, 2)}
        rows += [[sandbox, way, s["median_ms"], s["p90_ms"], s["n"]] for way, s in stats.items()]
    print(table(["sandbox", "grading", "median ms", "p90 ms", "tasks"], rows))
    print(f"written to {write('terminal_canary_cost', args.out, figures)}")


if __name__ == "__main__":
    main()
