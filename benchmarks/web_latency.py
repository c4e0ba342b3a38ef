"""Web-v0's reset and step latency: a new browser per episode vs. a reused browser with a fresh context.

Reset: `BrowserSession.open` on a web-mini app's start page, then `aclose`, either launching Chromium (and
Playwright's driver) each time, as Web-v0 does, or making only a fresh context on one browser kept running.
Step: browser tool calls (`snapshot`; then `snapshot`, `click` on a link and `back`, the last two loading a page
and snapshotting it) against the raw Playwright calls they wrap, to show what the tool layer adds; and
`env.reset` and `env.step` of a `snapshot` call through `gym.make("polar/Web-v0")` with the built-in harness:
the browser launches in the background during `reset`, so the first step, answered at once here, waits for it.
Contenders alternate within each round, each going first in turn.

    python benchmarks/web_latency.py [--quick]
"""

from __future__ import annotations

import json
import re
import time

import gymnasium as gym
from timing import atime_calls, options, rotated, summary, table, write

import polar.envs.registration
from polar import runtime
from polar.envs.web.browser import CHROMIUM, CHROMIUM_ARGS, BrowserSession
from polar.tasks.web import load_suite, start_app
from polar.types import ModelReply, ToolCall

SNAPSHOT = ModelReply(tool_calls=[ToolCall(id="c0", name="snapshot", arguments="{}")])


def first_link(snapshot: str) -> str:
    return re.search(r"- link .*?\[ref=(\w+)\]", snapshot).group(1)


async def reset_latency(url: str, rounds: int) -> dict[str, list[int]]:
    from playwright.async_api import async_playwright

    samples: dict[str, list[int]] = {"new browser each episode": [], "reused browser, fresh context": []}
    async with async_playwright() as playwright:
        shared = await playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))

        async def episode(browser=None) -> None:
            session = await BrowserSession.open(url, browser=browser)
            await session.aclose()

        contenders = {"new browser each episode": lambda: episode(),
                      "reused browser, fresh context": lambda: episode(shared)}
        for i in range(rounds):
            for name in rotated(list(contenders), i):
                samples[name] += await atime_calls(contenders[name], 1)
        await shared.close()
    return samples


async def step_latency(url: str, calls: int) -> dict[str, list[int]]:
    session = await BrowserSession.open(url)
    page = session.page
    samples: dict[str, list[int]] = {}
    try:
        async def tool_round_trip() -> None:
            link = first_link((await session.call("snapshot", {})).text)
            await session.call("click", {"ref": link})
            await session.call("back", {})

        async def raw_round_trip() -> None:
            link = first_link(await page.aria_snapshot(mode="ai"))
            await page.locator(f"aria-ref={link}").click()
            await page.wait_for_load_state("load")
            await page.aria_snapshot(mode="ai")
            await page.go_back(wait_until="load")
            await page.aria_snapshot(mode="ai")

        contenders = {
            "tool `snapshot`": lambda: session.call("snapshot", {}),
            "raw Playwright aria_snapshot": lambda: page.aria_snapshot(mode="ai"),
            "tools snapshot, click (a link), back": tool_round_trip,
            "raw Playwright: the same calls": raw_round_trip,
        }
        for i in range(calls):
            for name in rotated(list(contenders), i):
                samples.setdefault(name, []).extend(await atime_calls(contenders[name], 1))
    finally:
        await session.aclose()
    return samples


def env_latency(task_id: str, episodes: int, steps: int) -> dict[str, list[int]]:
    polar.envs.registration.register_envs()
    env = gym.make("polar/Web-v0", harness="builtin", max_turns=steps + 2)
    names = ("env.reset (app + sandbox; the browser starts in the background)",
             "first env.step (`snapshot`, waits for the browser)", "env.step (`snapshot`)")
    samples: dict[str, list[int]] = {name: [] for name in names}
    for _ in range(episodes):
        start = time.perf_counter_ns()
        env.reset(options={"task_id": task_id})
        samples[names[0]].append(time.perf_counter_ns() - start)
        for i in range(steps):
            start = time.perf_counter_ns()
            env.step(SNAPSHOT)
            samples[names[1] if i == 0 else names[2]].append(time.perf_counter_ns() - start)
    env.close()
    return samples


async def with_app(task, body):
    app = await start_app(task)
    try:
        return await body(app.base_url + task.start_path)
    finally:
        await app.stop()


def main() -> None:
    args = options(__doc__.splitlines()[0])
    rounds, calls, episodes, steps = (3, 10, 2, 5) if args.quick else (30, 200, 20, 20)
    task = load_suite(None)[0]
    resets = runtime.run(with_app(task, lambda url: reset_latency(url, rounds)))
    step_samples = runtime.run(with_app(task, lambda url: step_latency(url, calls)))
    env_samples = env_latency(task.id, episodes, steps)

    figures: dict = {"task": task.id, "reset": {}, "step": {}, "env": {}}
    rows = []
    for group, found in (("reset", resets), ("step", step_samples), ("env", env_samples)):
        for name, ns in found.items():
            figures[group][name] = summary(ns, "ms")
            rows.append([group, name, figures[group][name]["median_ms"], figures[group][name]["p90_ms"], len(ns)])
    reset_new = figures["reset"]["new browser each episode"]["median_ms"]
    reset_reused = figures["reset"]["reused browser, fresh context"]["median_ms"]
    figures["ratios"] = {
        "reset: new browser / reused browser": round(reset_new / reset_reused, 2),
        "snapshot: tool / raw Playwright": round(figures["step"]["tool `snapshot`"]["median_ms"]
                                                 / figures["step"]["raw Playwright aria_snapshot"]["median_ms"], 2),
        "snapshot, click, back: tools / raw Playwright": round(
            figures["step"]["tools snapshot, click (a link), back"]["median_ms"]
            / figures["step"]["raw Playwright: the same calls"]["median_ms"], 2),
    }
    print(table(["", "contender", "median ms", "p90 ms", "n"], rows))
    print(json.dumps(figures["ratios"], indent=2))
    print("wrote", write("web_latency", args.out, figures))


if __name__ == "__main__":
    main()
