"""A real Chromium per episode, driven through Playwright's async API, and the browser tools an agent uses on it.

The agent sees the page as Playwright's ARIA snapshot (`aria_snapshot(mode="ai")`): one line per element with
its role, accessible name and a `ref` (`- button "Add Blue mug to cart" [ref=e15]`), and acts on an element by
its ref. Every action returns the new snapshot, so an agent never acts on a page it has not seen. The browser
is bound to the episode's app: requests to any other origin are aborted, so the page cannot reach the host's
other loopback services, nor the network.

The browser starts in the background (`BrowserSession.start`), so its launch overlaps with the policy's first
model call. Each call has a deadline: a page that hangs gives an error observation when it runs out; a renderer
that crashes is replaced by a fresh page on the start URL, and the agent is told so. The episode continues
either way. Playwright's driver closes the browser when our process dies (its pipe closes), so no browser outlives
its episode even when the episode is killed.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any
from urllib.parse import urljoin, urlsplit

from polar.errors import SandboxError
from polar.protocols import ToolOutput
from polar.types import function_tool

CHROMIUM = os.environ.get("POLAR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage")
ACTION_TIMEOUT_S = 10.0
"""How long one action (a navigation, a click) may take before it gives an error observation."""
START_TIMEOUT_S = 30.0
"""The least time the start page may take to load as the browser starts: a start that fails ends the episode, so it
is not held to one action's timeout (a 1 s action timeout failed starts on a loaded machine)."""
SNAPSHOT_CHARS = 12_000
VIEWPORT = {"width": 1024, "height": 768}


_REF = ("string", "the element's ref from the latest snapshot, like e12")
TOOLS = [
    function_tool("snapshot", "Show the current page as an accessibility tree: one line per element with its role, "
                  "name and ref. Use refs to act on elements."),
    function_tool("goto", "Open a page of the site by its path (like /cart) or full URL on the same site.",
                  url=("string", "a path on the site, or a URL on the same site")),
    function_tool("click", "Click an element (a link, a button, a checkbox, a radio button).", ref=_REF),
    function_tool("type", "Replace the text of a text field with `text`; with submit=true, press Enter afterwards.",
                  ref=_REF, text=("string", "the whole new text of the field"),
                  submit=("boolean", "(optional) press Enter after typing")),
    function_tool("select", "Choose an option of a drop-down list by its label.",
                  ref=_REF, value=("string", "the option's label")),
    function_tool("back", "Go back to the previous page."),
    function_tool("screenshot", "Take a screenshot of the visible page (PNG)."),
]
TOOL_NAMES = tuple(t["function"]["name"] for t in TOOLS)


class BrowserSession:
    """One episode's browser: a Chromium (or a fresh context of a shared one) bound to one web app's origin.

    It is a `polar.protocols.ToolSet`: the built-in harness offers `specs` as function tools, external harnesses
    reach them over MCP through the gateway.
    """

    specs = TOOLS
    exclusive = True
    """The task is done in the browser alone: the built-in harness offers these tools instead of its shell."""

    def __init__(self, origin: str, start_url: str, action_timeout_s: float):
        self.origin, self.start_url, self.action_timeout_s = origin, start_url, action_timeout_s
        self._playwright: Any = None
        self._browser: Any = None
        self._context: Any = None
        self.page: Any = None
        self._crashed = False
        self._lock = asyncio.Lock()
        self._launching: asyncio.Future[None] | None = None

    @classmethod
    def start(cls, start_url: str, *, browser: Any = None,
              action_timeout_s: float = ACTION_TIMEOUT_S) -> BrowserSession:
        """Begin starting a browser on `start_url` (its origin is the only one the page may reach) and return at
        once: the launch, about a second, overlaps with what comes next (the policy's first model call), and the
        first tool call waits for it. With `browser`, a Playwright Browser to reuse, only a fresh context is
        made; the caller keeps owning that browser."""
        if browser is None and not os.path.exists(CHROMIUM):
            raise SandboxError(f"no Chromium at {CHROMIUM}: install it (apt-get install chromium) or set "
                               "POLAR_CHROMIUM to its path")
        parts = urlsplit(start_url)
        session = cls(f"{parts.scheme}://{parts.netloc}", start_url, action_timeout_s)
        session._launching = asyncio.ensure_future(session._launch(browser))
        return session

    @classmethod
    async def open(cls, start_url: str, *, browser: Any = None,
                   action_timeout_s: float = ACTION_TIMEOUT_S) -> BrowserSession:
        """`start`, then wait until the page is open."""
        session = cls.start(start_url, browser=browser, action_timeout_s=action_timeout_s)
        try:
            await session.ready()
        except BaseException:  # a start that failed after Chromium launched leaves nothing running
            await session.aclose()
            raise
        return session

    async def ready(self) -> None:
        """Wait for the launch. A launch that failed is a SandboxError that says why: the episode cannot go on."""
        try:
            await asyncio.shield(self._launching)
        except SandboxError:
            raise
        except Exception as e:
            raise SandboxError(f"the browser did not start: {_first_line(e)}") from e

    async def _launch(self, browser: Any) -> None:
        if browser is None:
            from playwright.async_api import async_playwright

            self._playwright = await async_playwright().start()
            browser = self._browser = await self._playwright.chromium.launch(
                executable_path=CHROMIUM, args=list(CHROMIUM_ARGS), headless=True)
        self._context = await browser.new_context(viewport=VIEWPORT)
        self._context.set_default_timeout(self.action_timeout_s * 1000)
        await self._context.route("**/*", self._only_own_origin)
        await self._new_page(max(self.action_timeout_s, START_TIMEOUT_S))

    async def _only_own_origin(self, route: Any) -> None:
        if _origin(route.request.url) == self.origin:
            await route.continue_()
        else:
            await route.abort("blockedbyclient")

    async def _new_page(self, timeout_s: float | None = None) -> None:
        self.page = await self._context.new_page()
        self._crashed = False
        self.page.on("crash", lambda _page: setattr(self, "_crashed", True))
        await self.page.goto(self.start_url, wait_until="load", timeout=(timeout_s or self.action_timeout_s) * 1000)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        """Run one tool; every failure of the call (a bad ref, a hung page, a crash) is an error observation, not
        an exception, so the episode goes on. Only a browser that never started raises (a SandboxError)."""
        await self.ready()
        async with self._lock:
            if self._crashed:
                return await self._recovered("the page had crashed")
            try:
                return await asyncio.wait_for(self._call(name, arguments), self.action_timeout_s * 2 + 5)
            except TimeoutError:
                return ToolOutput(f"Error: {name} did not finish within {self.action_timeout_s * 2 + 5:g}s; the "
                                  "page may be hung. Try `goto` to another page.", is_error=True)
            except _ToolError as e:
                return ToolOutput(f"Error: {e}", is_error=True)
            except Exception as e:  # Playwright's errors: a timeout, a detached element, a closed page
                if self._crashed:
                    return await self._recovered(f"the page crashed during {name}")
                return ToolOutput(f"Error: {name} failed: {_first_line(e)}", is_error=True)

    async def _call(self, name: str, args: dict[str, Any]) -> ToolOutput:
        page = self.page
        match name:
            case "snapshot":
                return ToolOutput(await self._snapshot())
            case "goto":
                url = urljoin(page.url if page.url.startswith(self.origin) else self.origin + "/", _arg(args, "url"))
                if _origin(url) != self.origin:
                    raise _ToolError(f"{url} is not on this site ({self.origin}); only its pages can be opened")
                await page.goto(url, wait_until="load")
            case "click":
                await (await self._element(args)).click()
            case "type":
                element = await self._element(args)
                await element.fill(_arg(args, "text"))
                if args.get("submit"):
                    await element.press("Enter")
            case "select":
                await (await self._element(args)).select_option(_arg(args, "value"))
            case "back":
                if await page.go_back(wait_until="load") is None:
                    raise _ToolError("there is no previous page")
            case "screenshot":
                return ToolOutput(f"Screenshot of {page.url}", image_png=await page.screenshot(type="png"))
            case _:
                raise _ToolError(f"unknown tool {name!r}; the browser tools are: {', '.join(TOOL_NAMES)}")
        return ToolOutput(await self._snapshot())

    async def _element(self, args: dict[str, Any]) -> Any:
        ref = _arg(args, "ref").strip().removeprefix("[").removesuffix("]").removeprefix("ref=")
        element = self.page.locator(f"aria-ref={ref}")
        if not ref or await element.count() == 0:  # fail now, not after the action's whole timeout
            raise _ToolError(f"no element with ref {ref!r} on this page; take a fresh snapshot and use its refs")
        return element

    async def _snapshot(self) -> str:
        """The page after the last action settled: its title, path and ARIA tree with refs."""
        for attempt in range(3):
            try:
                await self.page.wait_for_load_state("load")
                tree, title = await asyncio.gather(self.page.aria_snapshot(mode="ai"), self.page.title())
                break
            except Exception:  # a navigation replaced the page while we read it: read the new one
                if attempt == 2 or self._crashed:
                    raise
                await asyncio.sleep(0.05)
        path = self.page.url.removeprefix(self.origin) or "/"
        text = f"Page: {title} ({path})\n{tree}"
        if len(text) > SNAPSHOT_CHARS:
            text = text[:SNAPSHOT_CHARS] + f"\n[... {len(text) - SNAPSHOT_CHARS} characters left out ...]"
        return text

    async def _recovered(self, what: str) -> ToolOutput:
        """Replace a crashed page with a fresh one on the start URL, and say so with its snapshot."""
        if self.page is not None:
            try:
                await self.page.close()
            except Exception:  # a crashed page may refuse to close; the context still owns it
                pass
        await self._new_page()
        return ToolOutput(f"Error: {what}; a new page was opened on the start page.\n\n" + await self._snapshot(),
                          is_error=True)

    async def aclose(self) -> None:
        """Close the context, and the browser when this session started it (after a launch under way ends,
        so nothing it starts is left behind). Safe to call twice."""
        if self._launching is not None:
            await asyncio.wait([self._launching])
            if not self._launching.cancelled():
                self._launching.exception()  # retrieved: a failed launch is not reported again at exit
        for closer in (self._context, self._browser):
            if closer is not None:
                try:
                    await closer.close()
                except Exception:  # already closed, or the driver died with it
                    pass
        if self._playwright is not None:
            await self._playwright.stop()
        self._context = self._browser = self._playwright = self.page = None


class _ToolError(Exception):
    """A call the agent got wrong: it becomes the error observation's text."""


def _arg(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise _ToolError(f"argument {key!r} is required and must be a string")
    return value


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:500]
