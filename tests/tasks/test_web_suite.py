"""Admission of the `web-mini` suite, in a real Chromium driven by Playwright.

For every task: the reference solution, replayed against a fresh app, passes every expectation; the untouched app
fails at least one; every target resolves to exactly one element (what the oracle's snapshot-ref resolution
needs); and no page the solution visits has two buttons or links, or two fields, of the same accessible name.
Some near misses (a wrong quantity, a wrong item) must fail too. Then the loader's and the checker's edges.

One browser serves the whole module, on one asyncio loop that also serves the apps. Outside CI the browser tests
skip when Chromium or Playwright is missing; under CI=true they fail instead (the `chromium` fixture).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from polar.envs.web.browser import CHROMIUM_ARGS
from polar.errors import TaskFormatError, UnknownNameError
from polar.protocols import CallTool
from polar.tasks.web import Expectation, WebTask, check, load_suite, parse_task, start_app

TASKS = {task.id: task for task in load_suite()}
NAMED = re.compile(r'^\s*- (button|link|textbox|spinbutton|combobox|checkbox|radio) "((?:[^"\\]|\\.)*)"', re.M)


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def browser(loop: asyncio.AbstractEventLoop, chromium: str) -> Iterator[Any]:
    from playwright.async_api import async_playwright

    driver = loop.run_until_complete(async_playwright().start())
    launched = loop.run_until_complete(driver.chromium.launch(executable_path=chromium, headless=True,
                                                              args=list(CHROMIUM_ARGS)))
    yield launched
    loop.run_until_complete(launched.close())
    loop.run_until_complete(driver.stop())


def repeated_names(snapshot: str) -> list[str]:
    """Accessible names used twice on a page: among buttons and links together, and among each kind of field."""
    kinds = Counter(("button/link" if role in ("button", "link") else role, name)
                    for role, name in NAMED.findall(snapshot))
    return [f"{kind} {name!r} ×{count}" for (kind, name), count in kinds.items() if count > 1]


async def perform(page: Any, base_url: str, step: CallTool) -> None:
    """One browser-tool step, its target resolved the way the oracle resolves it: by role and exact name."""
    if step.name == "goto":
        await page.goto(base_url + step.arguments["url"])
    elif step.name == "back":
        await page.go_back()
    else:
        role, name, nth = step.target["role"], step.target["name"], step.target.get("nth")
        matches = page.get_by_role(role, name=name, exact=True)
        count = await matches.count()
        assert count == 1 or (nth is not None and nth < count), f"{role} {name!r} matches {count} elements"
        element = matches.nth(nth or 0)
        if step.name == "click":
            await element.click()
        elif step.name == "type":
            await element.fill(step.arguments["text"])
            if step.arguments.get("submit"):
                await element.press("Enter")
        else:
            await element.select_option(label=step.arguments["value"])
    await page.wait_for_load_state()


async def replay(browser: Any, task: WebTask, steps: list[CallTool]) -> tuple[dict[str, Any], list[str]]:
    """Run `steps` on a fresh app in a fresh browser context: the app's final state, and the pages' problems."""
    async with await start_app(task) as app:
        context = await browser.new_context()
        try:
            page = await context.new_page()
            page.set_default_timeout(10_000)
            await page.goto(app.base_url + task.start_path)
            problems = []
            for i, step in enumerate(steps):
                problems += [f"before step {i}: {p}" for p in repeated_names(await page.aria_snapshot(mode="ai"))]
                try:
                    await perform(page, app.base_url, step)
                except AssertionError as e:
                    raise AssertionError(f"{task.id}: step {i} ({step.name} {step.target}): {e}") from None
            problems += [f"at the end: {p}" for p in repeated_names(await page.aria_snapshot(mode="ai"))]
            return app.state(), problems
        finally:
            await context.close()


def failed(task: WebTask, state: dict[str, Any]) -> list[str]:
    return [description for description, passed in check(task, state) if not passed]


@pytest.mark.parametrize("task_id", [  # a sweep over every bundled task: the fast subset plays the first
    pytest.param(t, marks=pytest.mark.slow if i else ()) for i, t in enumerate(sorted(TASKS))])
def test_reference_solution_passes(task_id: str, browser: Any, loop: asyncio.AbstractEventLoop) -> None:
    task = TASKS[task_id]
    state, problems = loop.run_until_complete(replay(browser, task, task.reference_solution()))
    assert not problems, f"{task_id}: accessible names repeat on a page: {problems}"
    assert not failed(task, state), f"{task_id}: the reference fails {failed(task, state)}; state: {json.dumps(state)}"


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_doing_nothing_fails(task_id: str, loop: asyncio.AbstractEventLoop) -> None:
    async def untouched() -> dict[str, Any]:
        async with await start_app(TASKS[task_id]) as app:
            return app.state()

    assert failed(TASKS[task_id], loop.run_until_complete(untouched())), f"{task_id}: the no-op passes"


def _swap(task: WebTask, index: int, **arguments: Any) -> list[CallTool]:
    steps = task.reference_solution()
    steps[index] = replace(steps[index], arguments={**steps[index].arguments, **arguments})
    return steps


def _retarget(task: WebTask, index: int, name: str) -> list[CallTool]:
    steps = task.reference_solution()
    steps[index] = replace(steps[index], target={**steps[index].target, "name": name})
    return steps


NEAR_MISSES = {
    "wrong quantity": ("shop-towels-to-cart", lambda t: _swap(t, 2, text="2")),
    "a dearer grinder": ("shop-cheapest-grinder", lambda t: _retarget(t, 1, "Add Burr coffee grinder to cart")),
    "standard, not express": ("shop-mugs-express", lambda t: [s for s in t.reference_solution()
                                                              if s.target is None or s.target["role"] != "radio"]),
    "the bigger free room": ("booking-smallest-room", lambda t: _retarget(t, 5, "Choose Summit")),
    "the wrong lighthouse": ("wiki-taller-lighthouse", lambda t: _swap(t, 3, text="24")),
    "the wrong card": ("board-privacy-done", lambda t: _retarget(t, 0, "Move Prepare Q3 report to Done")),
}


@pytest.mark.parametrize("miss", sorted(NEAR_MISSES))
def test_near_miss_fails(miss: str, browser: Any, loop: asyncio.AbstractEventLoop) -> None:
    task_id, steps = NEAR_MISSES[miss]
    task = TASKS[task_id]
    state, _ = loop.run_until_complete(replay(browser, task, steps(task)))
    assert failed(task, state), f"{task_id}: {miss} passes every check"


class PageParts(HTMLParser):
    """The links, forms and form controls of one page, and the controls no label names."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.forms: list[dict[str, Any]] = []
        self.labelled: set[str] = set()
        self.controls: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "a":
            self.links.append(a.get("href", ""))
        elif tag == "form":
            self.forms.append({"action": a.get("action", ""), "method": a.get("method", "get"), "fields": {}})
        elif tag == "label":
            self.labelled.add(a.get("for", ""))
        elif tag in ("input", "select", "textarea"):
            if a.get("type") == "hidden":
                self.forms[-1]["fields"][a["name"]] = a.get("value", "")
            else:
                self.controls.append(a)

    def unlabelled(self) -> list[str]:
        return [c.get("name", "?") for c in self.controls if c.get("id") not in self.labelled
                and not c.get("aria-label")]


async def crawl(task: WebTask, limit: int = 80) -> list[str]:
    """Follow every link from the start page and submit every form with its visible fields empty: no answer may
    be a server error (bad input re-renders a form), and every control must have a label."""
    problems, seen, queue = [], set(), [task.start_path]
    async with await start_app(task) as app, aiohttp.ClientSession() as http:
        while queue and len(seen) < limit:
            path = queue.pop(0)
            if path in seen:
                continue
            seen.add(path)
            async with http.get(app.base_url + path) as response:
                parts = PageParts()
                parts.feed(await response.text())
                if response.status >= 500:
                    problems.append(f"GET {path}: {response.status}")
            problems += [f"{path}: no label for {name!r}" for name in parts.unlabelled()]
            queue += [href for href in parts.links if href.startswith("/") and href not in seen]
            for f in parts.forms:
                send = http.post(app.base_url + f["action"], data=f["fields"]) if f["method"] == "post" else \
                    http.get(app.base_url + f["action"], params=f["fields"])
                async with send as response:
                    if response.status >= 500:
                        problems.append(f"{f['method']} {f['action']} from {path}: {response.status}")
    return problems


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_app_pages_never_crash(task_id: str, loop: asyncio.AbstractEventLoop) -> None:
    assert not loop.run_until_complete(crawl(TASKS[task_id]))


def test_repeated_names_reads_a_snapshot() -> None:
    snapshot = """- navigation "Main" [ref=e1]:
  - link "Cart" [ref=e2] [cursor=pointer]:
  - button "Cart" [ref=e3]: Go
  - textbox "Email" [ref=e4]
  - radio "Email" [ref=e5]"""
    assert repeated_names(snapshot) == ["button/link 'Cart' ×2"]


# --- the format, without a browser ---------------------------------------------------------------------------

GOOD = {"id": "probe", "app": "shop", "difficulty": "easy", "goal": "Put a Blue mug in the cart.",
        "expect": [{"path": "cart.blue-mug", "equals": 1}],
        "solution": [{"tool": "click", "target": {"role": "button", "name": "Add Blue mug to cart"}}]}


def test_suite_shape() -> None:
    assert len(TASKS) >= 20
    assert {t.app for t in TASKS.values()} == {"shop", "accounts", "wiki", "board", "booking"}
    assert {t.difficulty for t in TASKS.values()} == {"easy", "medium", "hard"}
    task = parse_task(GOOD)
    assert task.reference_solution() == [CallTool("click", {}, {"role": "button", "name": "Add Blue mug to cart"})]
    assert "already open" in task.instruction and "Put a Blue mug in the cart." in task.instruction


@pytest.mark.parametrize("change, message", [
    ({"app": "bakery"}, "unknown app 'bakery'"),
    ({"goal": None}, "missing field 'goal'"),
    ({"expect": [{"path": "cart", "equal": {}}]}, "expect[0]: unknown operator 'equal'"),
    ({"expect": [{"path": "cart", "length": -1}]}, "expect[0]: `length` takes"),
    ({"solution": [{"tool": "hover", "target": {"role": "link", "name": "Cart"}}]},
     "solution[0]: unknown tool 'hover'"),
    ({"solution": [{"tool": "click", "target": {"role": "menu", "name": "Cart"}}]}, "solution[0]: a target needs"),
    ({"solution": [{"tool": "type", "target": {"role": "textbox", "name": "Email"}}]}, "type needs 'text'"),
    ({"solution": [{"tool": "goto", "url": "http://example.org/"}]}, "a path on the app"),
    ({"setup": {"basket": {}}}, "unknown setup key(s) basket"),
    ({"setup": {"cart": {"unicorn": 1}}}, "'unicorn'"),
    ({"colour": "blue"}, "unknown field 'colour'"),
    ({"expect": [{"path": "cart", "length": 1}, {"path": "cart", "length": 1}]}, "expect[1] repeats"),
])
def test_malformed_task_names_the_task(change: dict[str, Any], message: str) -> None:
    raw = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(TaskFormatError) as error:
        parse_task(raw, "probe.json")
    assert "probe.json: task 'probe'" in str(error.value) and message in str(error.value)


def test_suite_files(tmp_path: Path) -> None:
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps({"tasks": [GOOD, GOOD]}))
    with pytest.raises(TaskFormatError, match="task 'probe': the id is used twice"):
        load_suite(twice)
    (tmp_path / "one.json").write_text(json.dumps({"tasks": [GOOD]}))
    assert [t.id for t in load_suite(str(tmp_path / "one.json"))] == ["probe"]
    with pytest.raises(UnknownNameError, match="web-mini"):
        load_suite("web-maxi")


STATE = {"cart": {"blue-mug": 2}, "orders": [{"items": {"teapot": 1}, "city": "Paris"}, {"city": "Berlin"}],
         "answer": "per halvorsen", "flag": True}


@pytest.mark.parametrize("path, op, value, holds", [
    ("cart.blue-mug", "equals", 2, True),
    ("cart.blue-mug", "equals", 2.0, False),
    ("flag", "equals", 1, False),
    ("orders.-1.city", "equals", "Berlin", True),
    ("orders.0.items", "equals", {"teapot": 1}, True),
    ("orders", "contains", {"city": "Paris"}, True),
    ("orders", "contains", {"city": "Rome"}, False),
    ("cart", "contains", "blue-mug", True),
    ("answer", "contains", "halvorsen", True),
    ("answer", "excludes", "berg", True),
    ("nowhere", "excludes", "berg", False),
    ("orders", "length", 2, True),
    ("cart.red-mug", "absent", True, True),
    ("cart.blue-mug", "absent", False, True),
    ("orders.7.city", "equals", "Paris", False),
    ("cart.blue-mug.deeper", "contains", "x", False),
    ("flag", "length", 1, False),
])
def test_expectation_operators(path: str, op: str, value: Any, holds: bool) -> None:
    assert Expectation(path, op, value).holds(STATE) is holds


def test_check_never_raises_on_a_missing_path() -> None:
    for task in TASKS.values():
        for state in ({}, {"orders": None}, {"cart": []}, {"users": "x"}):
            assert all(isinstance(passed, bool) for _, passed in check(task, state))
