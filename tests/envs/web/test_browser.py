"""The browser tools on a real Chromium (Debian's, through Playwright), against a tiny app served on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from aiohttp import web
from support.browsers import browsers_of

from polar.envs.sandbox.shell import proc_stat
from polar.envs.web.browser import BrowserSession

PAGES = {
    "/": """<title>Home</title><h1>Home</h1><a href="/form">Sign up</a>
            <img src="http://127.0.0.1:{other}/pixel.png" alt="">""",
    "/form": """<title>Sign up</title><form method="post" action="/signup">
                <label>Name <input name="name"></label>
                <label>Plan <select name="plan"><option>free</option><option>pro</option></select></label>
                <button>Create account</button></form>""",
}


@contextlib.asynccontextmanager
async def serve_site():
    """The app (its state: `signups`) and a second server that must never be reached from the page."""
    state: dict = {"signups": [], "other_hits": 0}

    async def page(request: web.Request) -> web.Response:
        html = PAGES[request.path].format(other=state["other_port"])
        return web.Response(text=f"<!doctype html><html><body>{html}</body></html>", content_type="text/html")

    async def signup(request: web.Request) -> web.Response:
        form = await request.post()
        state["signups"].append({"name": form["name"], "plan": form["plan"]})
        return web.Response(text="<html><title>Done</title><body><p>Welcome!</p></body></html>",
                            content_type="text/html")

    async def hang(request: web.Request) -> web.Response:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def other(request: web.Request) -> web.Response:
        state["other_hits"] += 1
        return web.Response(text="secret")

    runners = []
    for routes in ([web.get("/", page), web.get("/form", page), web.post("/signup", signup), web.get("/hang", hang)],
                   [web.get("/{tail:.*}", other)]):
        app = web.Application()
        app.add_routes(routes)
        runner = web.AppRunner(app, handler_cancellation=True)
        await runner.setup()
        tcp = web.TCPSite(runner, "127.0.0.1", 0)
        await tcp.start()
        runners.append((runner, tcp._server.sockets[0].getsockname()[1]))
    state["other_port"] = runners[1][1]
    yield f"http://127.0.0.1:{runners[0][1]}", state
    for runner, _ in runners:
        await runner.cleanup()


def ref_of(snapshot: str, role: str, name: str) -> str:
    line = next(ln for ln in snapshot.splitlines() if f'{role} "{name}"' in ln)
    return line.split("[ref=")[1].split("]")[0]


def with_browser(body, path: str = "/", **options) -> None:
    """Run `body(browser, state)` on a fresh browser opened on the site's `path`, then close it."""
    async def main():
        async with serve_site() as (url, state):
            browser = await BrowserSession.open(url + path, **options)
            try:
                await body(browser, state)
            finally:
                await browser.aclose()
    asyncio.run(main())


def test_the_tools_act_on_the_page_by_ref_and_the_server_sees_it(chromium):
    async def body(browser, state):
        home = await browser.call("snapshot", {})
        assert home.text.startswith("Page: Home (/)") and not home.is_error
        form = await browser.call("click", {"ref": ref_of(home.text, "link", "Sign up")})
        assert "Page: Sign up (/form)" in form.text
        typed = await browser.call("type", {"ref": ref_of(form.text, "textbox", "Name"), "text": "Ada"})
        chosen = await browser.call("select", {"ref": ref_of(typed.text, "combobox", "Plan"), "value": "pro"})
        done = await browser.call("click", {"ref": ref_of(chosen.text, "button", "Create account")})
        assert "Welcome!" in done.text
        assert state["signups"] == [{"name": "Ada", "plan": "pro"}]
        back = await browser.call("back", {})
        assert "Page: Sign up (/form)" in back.text
        shot = await browser.call("screenshot", {})
        assert shot.image_png is not None and shot.image_png.startswith(b"\x89PNG")
    with_browser(body)


def test_wrong_calls_are_quick_error_observations(chromium):
    async def body(browser, state):
        started = time.monotonic()
        missing = await browser.call("click", {"ref": "e999"})
        assert missing.is_error and "no element with ref 'e999'" in missing.text
        assert time.monotonic() - started < 5  # not the action timeout: the ref is checked first
        assert (await browser.call("click", {})).is_error
        assert "unknown tool" in (await browser.call("scroll", {})).text
        away = await browser.call("goto", {"url": f"http://127.0.0.1:{state['other_port']}/"})
        assert away.is_error and "not on this site" in away.text
        assert state["other_hits"] == 0  # the home page's cross-origin image was blocked too
        ok = await browser.call("goto", {"url": "/form"})
        assert not ok.is_error and "Page: Sign up (/form)" in ok.text
    with_browser(body)


def test_a_hung_page_gives_an_error_within_the_deadline_and_the_episode_goes_on(chromium):
    async def body(browser, state):
        started = time.monotonic()
        hung = await browser.call("goto", {"url": "/hang"})
        assert hung.is_error and time.monotonic() - started < 1.0 * 2 + 5 + 1
        assert not (await browser.call("goto", {"url": "/form"})).is_error
    with_browser(body, action_timeout_s=1.0)


def test_a_crashed_page_is_replaced_and_the_agent_told(chromium):
    async def body(browser, state):
        with contextlib.suppress(Exception):  # Playwright reports the crash as a failed navigation
            await browser.page.goto("chrome://crash")
        after = await browser.call("snapshot", {})
        assert after.is_error and "crashed" in after.text and "Page: Sign up (/form)" in after.text
        assert not (await browser.call("snapshot", {})).is_error
    with_browser(body, path="/form")


def _alive(processes: dict[int, int]) -> list[int]:
    return [pid for pid, started in processes.items() if (st := proc_stat(pid)) is not None and st[1] == started]


def test_closing_stops_the_browser(chromium):
    async def body(browser, state):
        processes = browsers_of(os.getpid())
        assert processes, "the browser's processes should be found under this process"
        await browser.aclose()
        await browser.aclose()  # twice is fine
        deadline = time.monotonic() + 10
        while _alive(processes) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert _alive(processes) == []
    with_browser(body)


def test_a_start_that_fails_leaves_no_browser_running(chromium):
    """A start page that cannot load is a SandboxError, and the Chromium launched for it is closed: a failed start
    once left it running, and the worker's later tests found its processes."""
    import socket

    from polar.errors import SandboxError

    with socket.socket() as closed:  # a port nothing listens on once this block ends
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/"
    before = set(browsers_of(os.getpid()))

    async def main():
        with pytest.raises(SandboxError, match="the browser did not start"):
            await BrowserSession.open(url)
    asyncio.run(main())
    deadline = time.monotonic() + 10
    while set(browsers_of(os.getpid())) - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(browsers_of(os.getpid())) - before == set()


def test_no_browser_outlives_a_killed_episode(chromium, tmp_path):
    """SIGKILL the process running a Web-v0 episode: its Chromium goes with it."""
    script = textwrap.dedent("""
        import gymnasium as gym, sys
        env = gym.make("polar/Web-v0")
        env.reset(seed=0)
        env.step({"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "snapshot", "arguments": "{}"}}]})
        print("ready", flush=True)
        sys.stdin.read()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            cwd=tmp_path, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        processes = browsers_of(proc.pid)
        assert processes, "the episode's browser should run under its process"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 15
        while _alive(processes) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _alive(processes) == []
    finally:
        proc.kill()
