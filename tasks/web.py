"""Web-v0 tasks: a goal in a small web app, graded on the app's server-side state after the episode.

A suite is one JSON file, `web/<suite>.json`: `{"suite": ..., "tasks": [...]}`, one object per task:

    id          lowercase letters, digits and hyphens
    app         which app in `web_apps/` serves the episode (`APPS`)
    difficulty  easy | medium | hard
    goal        what the agent must achieve, never the clicks; `instruction` adds that the browser is open
    start_path  where the browser starts (default "/"); the agent is never given the URL
    setup       optional: state to start from instead of the app's seed (each app says which keys it takes)
    expect      checks on `RunningApp.state()`, each {"path": "orders.-1.delivery", "<operator>": value}
    solution    the reference, as browser-tool steps (`TOOLS`), replayed by the oracle

JSON because the expectations compare JSON values with a JSON state: a task file's `null`, lists and objects mean
exactly what the state holds, the standard library reads it, and TOML has no null.

A path is dot-separated: object keys, list indices (negative from the end), or `[field=value]`, the one element of
a list (or value of an object) whose `field` reads `value` (a missing or an ambiguous match is no element): checks
name an object by what the agent cannot change about it (a board card by its id, not its editable title; a new
card by its title, not by its position). An optional `where: {field: value, ...}` keeps, of the list (or the
object's values) at the path, the elements with those fields before the operator applies: `bookings` `where`
`{"status": "confirmed"}` `length` 4 counts the bookings in force. The operators:

    equals    the value equals this (JSON equality: 1 is not 1.0, true is not 1; list order counts)
    contains  a string holds this substring; a list holds an element equal to this or, for an object, an object
              element with these keys and values; an object has this key
    excludes  the path exists and does not contain this
    length    a string, list or object has this many items
    absent    true: the path does not exist; false: it does

A path that does not exist fails every check but `absent`; checking never raises.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from polar.errors import TaskFormatError, UnknownNameError
from polar.protocols import CallTool
from polar.tasks.web_apps import APPS, WebApp

BUNDLED = Path(__file__).with_name("web")

SUITES = {"web-mini": BUNDLED / "web-mini.json"}
DIFFICULTIES = ("easy", "medium", "hard")
TOOLS: dict[str, tuple[dict[str, type], dict[str, type], bool]] = {
    "goto": ({"url": str}, {}, False),
    "click": ({}, {}, True),
    "type": ({"text": str}, {"submit": bool}, True),
    "select": ({"value": str}, {}, True),
    "back": ({}, {}, False),
}
"""The browser tools a solution may call: name → (required arguments, optional arguments, acts on a target).
`goto` opens a path on the app; `type` replaces a field's content (and presses Enter when `submit`); `select`
picks an option by its label; `click` also toggles a checkbox and picks a radio button."""
ROLES = frozenset({"button", "link", "textbox", "spinbutton", "combobox", "checkbox", "radio"})
"""The ARIA roles a target may name: the interactive ones the bundled apps render."""
OPERATORS = ("equals", "contains", "excludes", "length", "absent")
_MISSING = object()
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_REQUIRED = ("id", "app", "difficulty", "goal", "expect", "solution")
_OPTIONAL = ("start_path", "setup")


@dataclass(frozen=True)
class Expectation:
    """One check on the app's state: the value at `path`, compared by `op` with `value`."""

    path: str
    op: str
    value: Any
    where: tuple[tuple[str, Any], ...] = ()
    """Fields an element keeps to be counted (`where` in the task file), in order; empty: no filter."""

    def describe(self) -> str:
        value = json.dumps(self.value, ensure_ascii=False)
        subject = self.path
        if self.where:
            subject += f" where {json.dumps(dict(self.where), ensure_ascii=False)}"
        if self.op == "length":
            return f"{subject} has length {value}"
        if self.op == "absent":
            return f"{subject} is {'absent' if self.value else 'present'}"
        return f"{subject} {self.op} {value}"

    @property
    def segments(self) -> list[str]:
        return _segments(self.path)

    @property
    def removal(self) -> bool:
        """Deleting state can satisfy this check (`excludes`, `absent: true`, `length: 0`), so on its own it shows
        no progress: partial credit counts it only beside passing checks that deleting cannot satisfy."""
        return self.op == "excludes" or (self.op == "absent" and self.value is True) or \
            (self.op == "length" and self.value == 0)

    @property
    def counting(self) -> bool:
        """A `length` check counts items and names none: any item makes `cart` length 1, deleting the wrong cards
        makes `cards` length 6. Partial credit counts it only beside the checks on its collection (its path and
        below), when they all pass."""
        return self.op == "length"

    def within(self, other: Expectation) -> bool:
        """This check looks at `other`'s path or below it."""
        return self.segments[:len(other.segments)] == other.segments

    @property
    def parent(self) -> str:
        """The path of the object holding this check's field ("" at the top)."""
        return ".".join(self.segments[:-1])

    def holds(self, state: Any) -> bool:
        found = _lookup(state, self.path)
        if self.where and found is not _MISSING:
            found = _kept(found, dict(self.where))
        if self.op == "absent":
            return (found is _MISSING) == self.value
        if found is _MISSING:
            return False
        if self.op == "equals":
            return _same(found, self.value)
        if self.op == "length":
            return isinstance(found, str | list | dict) and len(found) == self.value
        return _contains(found, self.value) == (self.op == "contains")


def _segments(path: str) -> list[str]:
    return re.findall(r"\[[^\]]*\]|[^.\[\]]+", path)


def _kept(found: Any, fields: Mapping[str, Any]) -> Any:
    """The elements of a list (or values of an object) with these fields; anything else is no collection."""
    items = found.values() if isinstance(found, dict) else found if isinstance(found, list) else None
    if items is None:
        return _MISSING
    return [item for item in items if isinstance(item, dict)
            and all(k in item and _same(item[k], v) for k, v in fields.items())]


def _selected(node: Any, selector: str) -> Any:
    """`[field=value]`: the one element of a list (or value of an object) whose field reads value."""
    key, _, wanted = selector[1:-1].partition("=")
    items = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    matches = [item for item in items if isinstance(item, dict) and key in item
               and (item[key] if isinstance(item[key], str) else json.dumps(item[key])) == wanted]
    return matches[0] if len(matches) == 1 else _MISSING


def _lookup(state: Any, path: str) -> Any:
    node = state
    for part in _segments(path):
        if part.startswith("["):
            node = _selected(node, part)
        elif isinstance(node, dict):
            node = node.get(part, _MISSING)
        elif isinstance(node, list) and re.fullmatch(r"-?\d+", part) and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
        if node is _MISSING:
            return _MISSING
    return node


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=repr) == json.dumps(b, sort_keys=True, default=repr)


def _contains(found: Any, value: Any) -> bool:
    if isinstance(found, str):
        return isinstance(value, str) and value in found
    if isinstance(found, dict):
        return isinstance(value, str) and value in found
    if isinstance(found, list):
        if isinstance(value, dict):
            return any(isinstance(item, dict) and all(k in item and _same(item[k], v) for k, v in value.items())
                       for item in found)
        return any(_same(item, value) for item in found)
    return False


@dataclass(frozen=True, eq=False)
class WebTask:
    """One Web-v0 task, loaded and checked; compared and hashed by identity."""

    id: str
    app: str
    difficulty: str
    goal: str
    expect: tuple[Expectation, ...]
    solution: tuple[CallTool, ...]
    start_path: str = "/"
    setup: dict[str, Any] = field(default_factory=dict)

    @property
    def instruction(self) -> str:
        """The goal, with what the agent must know first: the browser is open and only the app's record counts."""
        app = APPS[self.app]
        return (f"A web browser is already open on {app.title}, {app.blurb}. {self.goal}\n\n"
                "Work in the browser. Only what the app itself records counts, so carry each step through in the "
                "app (submit the form, place the order) rather than describing it.")

    def reference_solution(self) -> list[CallTool]:
        return list(self.solution)


def check(task: WebTask, state: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """One (description, passed) per expectation, in the task's order."""
    return [(e.describe(), e.holds(state)) for e in task.expect]


def collateral(task: WebTask, parent: str, start: Mapping[str, Any], state: Mapping[str, Any]) -> bool:
    """A key of the object at `parent` that the untouched app had is gone, and no check of the task names it:
    something was deleted that the task did not ask to delete (every card but the one that must stay)."""
    before, after = _lookup(start, parent), _lookup(state, parent)
    if not isinstance(before, dict):
        return False  # a list or a text: the constructive checks beside a removal look at what must remain
    if not isinstance(after, dict):
        return True
    named = {e.segments[-1] for e in task.expect if e.parent == parent}
    return any(key not in after for key in before if key not in named)


# --- loading -------------------------------------------------------------------------------------------


def _expectation(raw: Any, where: str) -> Expectation:
    if not isinstance(raw, dict) or not isinstance(raw.get("path"), str) or not raw["path"]:
        raise TaskFormatError(f"{where}: must be an object with a non-empty string `path` and one operator")
    ops = [k for k in raw if k not in ("path", "where")]
    unknown = [k for k in ops if k not in OPERATORS]
    if unknown:
        raise TaskFormatError(f"{where}: unknown operator {unknown[0]!r} (operators: {', '.join(OPERATORS)})")
    if len(ops) != 1:
        raise TaskFormatError(f"{where}: needs exactly one operator besides `path`, got {len(ops)}")
    op, value = ops[0], raw[ops[0]]
    if op == "length" and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise TaskFormatError(f"{where}: `length` takes a whole number >= 0, got {value!r}")
    if op == "absent" and not isinstance(value, bool):
        raise TaskFormatError(f"{where}: `absent` takes true or false, got {value!r}")
    fields = raw.get("where", {})
    if not isinstance(fields, dict) or ("where" in raw and not fields):
        raise TaskFormatError(f"{where}: `where` takes an object of fields and the values they must have, "
                              f"got {fields!r}")
    return Expectation(raw["path"], op, value, tuple(fields.items()))


def _step(raw: Any, where: str) -> CallTool:
    if not isinstance(raw, dict) or "tool" not in raw:
        raise TaskFormatError(f"{where}: must be an object with a `tool`")
    tool = raw["tool"]
    if tool not in TOOLS:
        raise TaskFormatError(f"{where}: unknown tool {tool!r} (tools: {', '.join(TOOLS)})")
    required, optional, targeted = TOOLS[tool]
    arguments = {k: v for k, v in raw.items() if k not in ("tool", "target")}
    for key, value in arguments.items():
        kind = required.get(key) or optional.get(key)
        if kind is None:
            raise TaskFormatError(f"{where}: {tool} takes no argument {key!r}")
        if not isinstance(value, kind):
            raise TaskFormatError(f"{where}: {tool}'s {key!r} must be a {kind.__name__}, got {value!r}")
    missing = [k for k in required if k not in arguments]
    if missing:
        raise TaskFormatError(f"{where}: {tool} needs {', '.join(repr(k) for k in missing)}")
    if tool == "goto" and not arguments["url"].startswith("/"):
        raise TaskFormatError(f"{where}: goto's url is a path on the app, starting with /, got {arguments['url']!r}")
    target = raw.get("target")
    if not targeted:
        if target is not None:
            raise TaskFormatError(f"{where}: {tool} takes no target")
        return CallTool(tool, arguments)
    if not isinstance(target, dict):
        raise TaskFormatError(f"{where}: {tool} needs a target {{\"role\": ..., \"name\": ...}}")
    if target.get("role") not in ROLES or not isinstance(target.get("name"), str) or not target["name"]:
        raise TaskFormatError(f"{where}: a target needs a role ({', '.join(sorted(ROLES))}) and a non-empty name, "
                              f"got {target!r}")
    nth = target.get("nth", 0)
    if set(target) - {"role", "name", "nth"} or isinstance(nth, bool) or not isinstance(nth, int) or nth < 0:
        raise TaskFormatError(f"{where}: a target has only role, name and nth (a whole number >= 0), got {target!r}")
    return CallTool(tool, arguments, dict(target))


def parse_task(raw: Any, where: str = "") -> WebTask:
    """One task from its JSON object; whatever breaks the format raises TaskFormatError naming the task."""
    name = raw.get("id") if isinstance(raw, dict) else None
    prefix = f"{where}: " if where else ""
    prefix += f"task {name!r}" if isinstance(name, str) else "a task without an id"
    if not isinstance(raw, dict):
        raise TaskFormatError(f"{prefix}: must be a JSON object, got {type(raw).__name__}")
    missing = [k for k in _REQUIRED if k not in raw]
    if missing:
        raise TaskFormatError(f"{prefix}: missing field {missing[0]!r} (a task has {', '.join(_REQUIRED)})")
    unknown = sorted(set(raw) - {*_REQUIRED, *_OPTIONAL})
    if unknown:
        raise TaskFormatError(f"{prefix}: unknown field {unknown[0]!r} (fields: {', '.join(_REQUIRED + _OPTIONAL)})")
    if not isinstance(name, str) or not _ID.match(name):
        raise TaskFormatError(f"{prefix}: `id` must be lowercase letters, digits and hyphens")
    if raw["app"] not in APPS:
        raise TaskFormatError(f"{prefix}: unknown app {raw['app']!r} (apps: {', '.join(APPS)})")
    if raw["difficulty"] not in DIFFICULTIES:
        raise TaskFormatError(f"{prefix}: `difficulty` must be one of {', '.join(DIFFICULTIES)}")
    if not isinstance(raw["goal"], str) or not raw["goal"].strip():
        raise TaskFormatError(f"{prefix}: `goal` must be a non-empty string")
    start_path = raw.get("start_path", "/")
    if not isinstance(start_path, str) or not start_path.startswith("/"):
        raise TaskFormatError(f"{prefix}: `start_path` must be a path starting with /, got {start_path!r}")
    setup = raw.get("setup", {})
    if not isinstance(setup, dict):
        raise TaskFormatError(f"{prefix}: `setup` must be an object")
    try:
        APPS[raw["app"]](setup)
    except ValueError as e:
        raise TaskFormatError(f"{prefix}: `setup` does not fit the {raw['app']} app: {e}") from None
    for key in ("expect", "solution"):
        if not isinstance(raw[key], list) or not raw[key]:
            raise TaskFormatError(f"{prefix}: `{key}` must be a non-empty list")
    expect = tuple(_expectation(e, f"{prefix}: expect[{i}]") for i, e in enumerate(raw["expect"]))
    descriptions = [e.describe() for e in expect]
    for i, description in enumerate(descriptions):
        if description in descriptions[:i]:  # a check's description is its name in the reward's log and credit
            raise TaskFormatError(f"{prefix}: expect[{i}] repeats an earlier check ({description})")
    return WebTask(
        id=name, app=raw["app"], difficulty=raw["difficulty"], goal=raw["goal"].strip(), expect=expect,
        solution=tuple(_step(s, f"{prefix}: solution[{i}]") for i, s in enumerate(raw["solution"])),
        start_path=start_path, setup=setup)


def load_suite(suite: str | Path | None = None) -> list[WebTask]:
    """A bundled suite by name (`web-mini`, the default) or a suite file by path."""
    name = "web-mini" if suite is None else str(suite)
    path = SUITES.get(name) or Path(name)
    if not path.is_file():
        raise UnknownNameError("Web-v0 suite", name, [*SUITES, "<a suite .json file>"])
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise TaskFormatError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list) or not data["tasks"]:
        raise TaskFormatError(f"{path}: must be an object whose `tasks` is a non-empty list of tasks")
    tasks = [parse_task(raw, str(path)) for raw in data["tasks"]]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise TaskFormatError(f"{path}: task {task.id!r}: the id is used twice")
        seen.add(task.id)
    return tasks


# --- running an app ------------------------------------------------------------------------------------


class RunningApp:
    """One live app instance on loopback, serving one episode from its seed; `state()` is what `check` grades."""

    def __init__(self, base_url: str, app: WebApp, runner: web.AppRunner) -> None:
        self.base_url = base_url
        """`http://127.0.0.1:<port>`; the task's `start_path` goes after it."""
        self._app, self._runner = app, runner

    def state(self) -> dict[str, Any]:
        """A detached, JSON-shaped copy of everything the app records."""
        return json.loads(json.dumps(self._app.state()))

    async def stop(self) -> None:
        """Close the server and its connections. Safe to call twice."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> RunningApp:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def start_app(task: WebTask) -> RunningApp:
    """A fresh instance of the task's app (seed plus the task's `setup`), served on 127.0.0.1 at a free port by
    the running asyncio loop, so the caller's loop must keep running while the browser uses it."""
    app = APPS[task.app](copy.deepcopy(task.setup))
    runner = web.AppRunner(app.application(), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
    except BaseException:
        await runner.cleanup()
        raise
    port = runner.addresses[0][1]
    return RunningApp(f"http://127.0.0.1:{port}", app, runner)
