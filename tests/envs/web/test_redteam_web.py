"""Red team, Web-v0: vandalism earns no partial credit, and a state the agent could only forge scores nothing.

Web-v0 grades the app's server-side state, which the agent changes only through the browser (its sandbox has no
network; the browser is bound to the app's origin). What a policy can still try is to make checks pass by
destroying state or counting the wrong things: deleting a page's text satisfies an `excludes` check, deleting every
card satisfies `absent`, any item in the cart satisfies `cart` has length 1.
Each attack below is a state the agent could reach through the app; each must score 0 through the leaderboard's
re-grading path (`WebFamily.regrade`, the same decision the live episode takes), while honest progress still
earns partial credit and the reference outcome scores 1.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from polar.envs.web import WebFamily
from polar.tasks.web import load_suite, start_app

FAMILY = WebFamily()
TASKS = {t.id: t for t in FAMILY.load_tasks("web-mini")}


def _start_state(task_id: str) -> dict[str, Any]:
    async def read() -> dict[str, Any]:
        async with await start_app(TASKS[task_id]) as app:
            return app.state()

    return asyncio.run(read())


def _regrade(task_id: str, state: dict[str, Any]) -> tuple[float, dict[str, float]]:
    grade = asyncio.run(FAMILY.regrade(TASKS[task_id], {"state": state}, backend=None))  # type: ignore[arg-type]
    assert grade.error is None, grade.error
    return FAMILY.reward.score(grade.components), grade.components


def _blank_ferry_page(state: dict[str, Any]) -> None:
    state["pages"]["karsholm-ferry"]["text"] = ""


def _ferry_page_replaced(state: dict[str, Any]) -> None:
    state["pages"]["karsholm-ferry"]["text"] = "gone"


def _every_card_deleted(state: dict[str, Any]) -> None:
    state["cards"].clear()


def _every_done_card_deleted(state: dict[str, Any]) -> None:
    state["cards"] = {name: card for name, card in state["cards"].items() if card["status"] != "done"}


def _a_wrong_item_in_the_cart(state: dict[str, Any]) -> None:
    assert state["cart"] == {} and "teapot" not in state["cart"]
    state["cart"]["teapot"] = 1


def _two_cards_that_must_stay_deleted(state: dict[str, Any]) -> None:
    keep = {"Prepare Q3 report", "Refresh test data", "Review pull requests"}
    for name in [n for n in state["cards"] if n not in keep][:2]:
        del state["cards"][name]


ATTACKS: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "blank page satisfies excludes": ("wiki-ferry-edit", _blank_ferry_page),
    "replaced page satisfies excludes": ("wiki-ferry-edit", _ferry_page_replaced),
    "every card deleted satisfies absent": ("board-sam-cleanup", _every_card_deleted),
    "over-deleting satisfies absent": ("board-sam-cleanup", _every_done_card_deleted),
    "a wrong item in the cart satisfies a length": ("shop-towels-to-cart", _a_wrong_item_in_the_cart),
    "the wrong cards deleted satisfy a length": ("board-sam-cleanup", _two_cards_that_must_stay_deleted),
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_vandalism_scores_zero(attack: str) -> None:
    task_id, vandalise = ATTACKS[attack]
    state = _start_state(task_id)
    vandalise(state)
    reward, components = _regrade(task_id, state)
    assert reward == 0.0, components


def test_honest_progress_still_earns_partial_credit() -> None:
    """Fixing the crossing time but not the ship's name: constructive progress counts, with its removal check."""
    state = _start_state("wiki-ferry-edit")
    page = state["pages"]["karsholm-ferry"]
    assert "55 minutes" in page["text"]
    page["text"] = page["text"].replace("55 minutes", "40 minutes")
    reward, components = _regrade("wiki-ferry-edit", state)
    assert components["success"] == 0.0
    assert 0.0 < components["checks_frac"] < 1.0, components
    assert 0.0 < reward < 0.2


def test_one_right_deletion_earns_partial_credit() -> None:
    state = _start_state("board-sam-cleanup")
    del state["cards"]["Prepare Q3 report"]
    _, components = _regrade("board-sam-cleanup", state)
    assert components["success"] == 0.0 and components["checks_frac"] > 0.0, components


def test_removal_checks_without_a_constructive_companion_earn_nothing() -> None:
    """A user task whose only check is a removal is graded on success alone: partial credit has nothing to count."""
    base = TASKS["board-sam-cleanup"]
    only_removals = dataclasses.replace(base, expect=tuple(e for e in base.expect if e.removal))
    state = _start_state("board-sam-cleanup")
    del state["cards"]["Prepare Q3 report"]
    grade = asyncio.run(FAMILY.regrade(only_removals, {"state": state}, backend=None))  # type: ignore[arg-type]
    assert grade.components == {"success": 0.0, "checks_frac": 0.0}


def test_the_bundled_suite_loads_with_the_rule() -> None:
    assert {e.removal for t in load_suite("web-mini") for e in t.expect} == {True, False}
