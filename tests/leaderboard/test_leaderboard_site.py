"""The built leaderboard site in a real browser: Chromium (from Debian), driven by Playwright, over HTTP."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest
from support.leaderboard_runs import leaderboard, polar_eval

from polar.envs.web.browser import CHROMIUM_ARGS


@pytest.fixture(scope="module")
def site(bwrap, tmp_path_factory) -> Path:
    """A site built from two real submissions: the oracle (pass@1 1) and the empty reply (pass@1 0)."""
    root = tmp_path_factory.mktemp("leaderboard")
    submissions = root / "submissions"
    for policy in ("empty", "oracle"):
        run = polar_eval(root / "runs" / policy, policy)
        assert leaderboard("submit", str(run), "--out", str(submissions / f"{policy}-builtin")) == 0
    assert leaderboard("build", "--submissions", str(submissions), "--out", str(root / "site")) == 0
    return root / "site"


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    thread.join()


def test_the_site_ranks_sorts_and_filters_in_chromium(chromium, served, tmp_path, record_property):
    from playwright.sync_api import expect, sync_playwright

    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on("request", lambda request: requests.append(request.url))
            page.goto(served + "index.html")
            names = page.locator("table.ranking tbody tr td:nth-child(2)")
            expect(names).to_have_text(["oracle-builtin", "empty-builtin"])  # ranked by pass@1
            expect(page.locator("table.ranking tbody tr td:nth-child(6)")).to_have_text(["1.000", "0.000"])

            header = page.locator("table.ranking thead th", has_text="Submission")
            header.click()
            expect(names).to_have_text(["empty-builtin", "oracle-builtin"])
            expect(header).to_have_attribute("aria-sort", "ascending")
            header.click()
            expect(names).to_have_text(["oracle-builtin", "empty-builtin"])
            page.locator("table.ranking thead th", has_text="pass@1").click()  # ascending: the worst first
            expect(names).to_have_text(["empty-builtin", "oracle-builtin"])

            page.locator("#filter").fill("oracle")
            expect(page.locator("table.ranking tbody tr:visible td:nth-child(2)")).to_have_text(["oracle-builtin"])
            expect(page.locator("#shown")).to_have_text("1 of 2 rows shown")
            page.locator("#filter").fill("")
            expect(page.locator("table.ranking tbody tr:visible")).to_have_count(2)
            screenshot = tmp_path / "leaderboard.png"
            page.screenshot(path=str(screenshot), full_page=True)

            page.locator("table.ranking a", has_text="oracle-builtin").click()
            expect(page.locator("h1")).to_have_text("oracle-builtin")
            expect(page.locator("table.sortable").first.locator("tbody tr")).to_have_count(2)  # one row per task
            traces = page.request.get(served + "submissions/oracle-builtin/traces.jsonl")
            assert traces.ok and len(traces.text().splitlines()) == 4
        finally:
            browser.close()
    assert all(url.startswith(served) for url in requests), f"the site fetched something else: {requests}"
    assert screenshot.stat().st_size > 10_000
    record_property("screenshot", str(screenshot))
    print(f"screenshot: {screenshot}")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:
        pass

