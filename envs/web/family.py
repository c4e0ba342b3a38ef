"""polar/Web-v0: tasks on small web apps, done in a real Chromium, graded from the app's server-side state.

Each episode gets a fresh instance of the task's app, served by the env on loopback, and its own browser open
on the app's start page (`browser.py`). The agent acts only through the browser tools: the built-in
harness offers them as function tools, external harnesses reach them over MCP through the gateway. The agent's
sandbox has no network, so the app is reachable through the browser alone.

Grading reads the app's state, never the page or what the agent says: `success` when every check of the task
passes, plus capped partial credit for the checks the agent made pass that name the task's own objects (checks
that the untouched app already passes earn nothing, so doing nothing scores 0; a count or a removal counts only
beside the checks that name what it counts or removes: `_grade_state`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from polar.envs.web.browser import BrowserSession
from polar.protocols import EpisodeSetup, Grade, Sandbox, SandboxBackend, SandboxSpec, ToolOutput
from polar.reward import RewardComponent, RewardSpec
from polar.tasks.web import RunningApp, WebTask, collateral, load_suite, start_app


@dataclass
class WebEpisode:
    """One episode's app and browser; the `ToolSet` the harness gets. Closing it stops both."""

    task: WebTask
    app: RunningApp
    browser: BrowserSession
    start: dict[str, Any]
    """The untouched app's state: the checks it already passes earn no partial credit."""

    @property
    def specs(self) -> list[dict[str, Any]]:
        return self.browser.specs

    @property
    def exclusive(self) -> bool:
        return self.browser.exclusive

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        return await self.browser.call(name, arguments)

    async def aclose(self) -> None:
        try:
            await self.browser.aclose()
        finally:
            await self.app.stop()


class WebFamily:
    """Task loading, app and browser setup, and grading for polar/Web-v0."""

    env_id = "polar/Web-v0"
    version = 0
    default_suite = "web-mini"
    reward = RewardSpec(
        (
            RewardComponent("success", 1.0, 1.0, "outcome", "every server-side check of the task passes"),
            RewardComponent("checks_frac", 0.2, 0.2, "process",
                            "share of the checks the untouched app fails that pass at the end"),
        )
    )

    def load_tasks(self, suite: str | None) -> list[WebTask]:
        return load_suite(suite)

    def sandbox_spec(self, task: WebTask, backend: str | None = None) -> SandboxSpec:
        """Where an external harness runs; it needs nothing from the task, which lives in the browser."""
        return SandboxSpec()

    async def setup(self, task: WebTask, sandbox: Sandbox) -> EpisodeSetup:
        app = await start_app(task)
        try:
            start = app.state()
            browser = BrowserSession.start(app.base_url + task.start_path)
        except BaseException:
            await app.stop()
            raise
        episode = WebEpisode(task, app, browser, start)
        return EpisodeSetup(tools=episode, state=episode)

    async def grade(self, task: WebTask, sandbox: Sandbox, backend: SandboxBackend,
                    state: WebEpisode | None = None) -> Grade:
        episode = state
        if not isinstance(episode, WebEpisode):
            return Grade(self.reward.zeros(), error=f"task {task.id}: grade needs the episode setup() returned")
        state = episode.app.state()
        grade = self._grade_state(task, state, episode.start)
        grade.artefact = {"state": state, "url": episode.browser.page.url if episode.browser.page else None}
        return grade

    async def regrade(self, task: WebTask, artefact: dict, backend: SandboxBackend) -> Grade:
        """Decide a submitted episode again from the app state it recorded, against a fresh app's own start."""
        state = artefact.get("state") if isinstance(artefact, dict) else None
        if not isinstance(state, dict):
            return Grade(self.reward.zeros(), error=f"task {task.id}: the artefact holds no app state to re-grade")
        app = await start_app(task)
        try:
            start = app.state()
        finally:
            await app.stop()
        return self._grade_state(task, state, start)

    def _grade_state(self, task: WebTask, state: dict, start: dict) -> Grade:
        """`success` when every check passes. `checks_frac` is the share of the checks the untouched app (`start`)
        fails that pass now, counting only checks that name the task's own objects: a count (`Expectation.counting`)
        counts only when the checks on its collection exist and all pass, and a removal check
        (`Expectation.removal`) only when the constructive checks on its object (same parent path) exist and all
        pass, and nothing else of that object is gone (`collateral`). Deleting a page's text, every card or every
        card but one that must stay, a wrong item in the cart or the wrong cards deleted earn nothing."""
        passed_at_start = {e.describe() for e in task.expect if e.holds(start)}
        results = [(e, e.holds(state)) for e in task.expect]
        earned, to_earn = 0, 0
        for e, ok in results:
            if e.counting:
                beside = [c_ok for c, c_ok in results if c is not e and c.within(e)]
            elif e.removal:
                beside = [c_ok for c, c_ok in results if not c.removal and not c.counting and c.parent == e.parent]
                beside += [not collateral(task, e.parent, start, state)] if beside else []
            else:
                beside = [True]
            if e.describe() in passed_at_start or not beside:
                continue
            to_earn += 1
            earned += ok and all(beside)
        components = {"success": float(all(ok for _, ok in results)),
                      "checks_frac": earned / to_earn if to_earn else 0.0}
        log = "\n".join(f"{'PASS' if ok else 'FAIL'} {e.describe()}" for e, ok in results)
        return Grade(components, log)
