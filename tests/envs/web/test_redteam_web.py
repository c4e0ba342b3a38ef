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
from polar.tasks.web_apps.booking import _booking
from polar.tasks.web_apps.wiki import Wiki

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


def _write_page(state: dict[str, Any], slug: str, text: str) -> None:
    """The page as the wiki records an edit: its source and what a reader reads."""
    state["pages"][slug] |= {"text": text, "reads": Wiki._plain(text)}


def _regraded_after(task_id: str, change: Callable[[dict[str, Any]], None]) -> tuple[float, dict[str, float]]:
    """The task's untouched state, changed as the agent could through the app, then re-graded."""
    state = _start_state(task_id)
    change(state)
    return _regrade(task_id, state)


def _blank_ferry_page(state: dict[str, Any]) -> None:
    _write_page(state, "karsholm-ferry", "")


def _ferry_page_replaced(state: dict[str, Any]) -> None:
    _write_page(state, "karsholm-ferry", "gone")


def _every_card_deleted(state: dict[str, Any]) -> None:
    state["cards"].clear()


def _every_done_card_deleted(state: dict[str, Any]) -> None:
    state["cards"] = {name: card for name, card in state["cards"].items() if card["status"] != "done"}


def _a_wrong_item_in_the_cart(state: dict[str, Any]) -> None:
    assert state["cart"] == {} and "teapot" not in state["cart"]
    state["cart"]["teapot"] = 1


def _card(state: dict[str, Any], title: str) -> str:
    (cid,) = [cid for cid, card in state["cards"].items() if card["title"] == title]
    return cid


def _two_cards_that_must_stay_deleted(state: dict[str, Any]) -> None:
    keep = {_card(state, t) for t in ("Prepare Q3 report", "Refresh test data", "Review pull requests")}
    for cid in [c for c in state["cards"] if c not in keep][:2]:
        del state["cards"][cid]


def _sams_cards_renamed_two_others_deleted(state: dict[str, Any]) -> None:
    """Sam's To-do cards stay under new titles; two other people's cards go, so the board holds six."""
    state["cards"][_card(state, "Prepare Q3 report")]["title"] = "Prepare Q3 summary"
    state["cards"][_card(state, "Refresh test data")]["title"] = "Refresh test fixtures"
    for title in ("Update privacy policy", "Write onboarding guide"):
        del state["cards"][_card(state, title)]


def _every_card_but_the_one_to_keep_deleted(state: dict[str, Any]) -> None:
    keep = _card(state, "Review pull requests")
    state["cards"] = {keep: state["cards"][keep]}


def _a_done_card_renamed_into_the_privacy_card(state: dict[str, Any]) -> None:
    """The privacy card, renamed, stays in To do; the Done logo card takes its title."""
    privacy, logo = _card(state, "Update privacy policy"), _card(state, "Design new logo")
    state["cards"][privacy]["title"] = "Update privacy policy (old)"
    state["cards"][logo]["title"] = "Update privacy policy"


def _another_card_renamed_into_the_migration_card(state: dict[str, Any]) -> None:
    migration, guide = _card(state, "Migrate database"), _card(state, "Write onboarding guide")
    state["cards"][migration]["title"] = "Migrate database (old)"
    state["cards"][guide] |= {"title": "Migrate database", "priority": "medium"}


def _the_booking_made_then_cancelled(state: dict[str, Any]) -> None:
    done = _booking("B004", "harbour", "2025-06-05", 14, 16, 6, "Budget review", "Lena Ortiz", "lena@example.com")
    state["bookings"].append(done | {"status": "cancelled"})


def _the_order_placed_then_cancelled(state: dict[str, Any]) -> None:
    order = dict(state["orders"][-1], number="A1004", items={"blue-mug": 2, "red-mug": 1}, delivery="express",
                 name="Camille Martin", street="12 Rue Oberkampf", postcode="75011", city="Paris", country="FR")
    state["orders"].append(order | {"status": "cancelled", "cancel_reason": "mistake"})


def _the_old_time_split_across_lines(state: dict[str, Any]) -> None:
    """The source no longer holds "55 minutes", but the page still reads so; "40 minutes" is elsewhere."""
    text = state["pages"]["karsholm-ferry"]["text"].replace("55 minutes.", "55\nminutes. Check-in closes 40 minutes "
                                                             "before departure.")
    _write_page(state, "karsholm-ferry", text)


def _the_keepers_page_names_the_wrong_keeper(state: dict[str, Any]) -> None:
    state["pages"]["lighthouse-keepers"] = {"title": "Lighthouse keepers", "revisions": 1, "last_summary": "",
                                            "text": "", "reads": ""}
    _write_page(state, "lighthouse-keepers", "The longest-serving keeper was Oskar Lund. (It was not Ingrid Solberg.)")


ATTACKS: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "blank page satisfies excludes": ("wiki-ferry-edit", _blank_ferry_page),
    "replaced page satisfies excludes": ("wiki-ferry-edit", _ferry_page_replaced),
    "every card deleted satisfies absent": ("board-sam-cleanup", _every_card_deleted),
    "over-deleting satisfies absent": ("board-sam-cleanup", _every_done_card_deleted),
    "a wrong item in the cart satisfies a length": ("shop-towels-to-cart", _a_wrong_item_in_the_cart),
    "the wrong cards deleted satisfy a length": ("board-sam-cleanup", _two_cards_that_must_stay_deleted),
    "every card but the one to keep deleted": ("board-sam-cleanup", _every_card_but_the_one_to_keep_deleted),
    "cards renamed instead of deleted": ("board-sam-cleanup", _sams_cards_renamed_two_others_deleted),
    "a done card renamed into the one to move": ("board-privacy-done", _a_done_card_renamed_into_the_privacy_card),
    "another card renamed into the one to edit": ("board-migration-blocked",
                                                  _another_card_renamed_into_the_migration_card),
    "the old time split across lines": ("wiki-ferry-edit", _the_old_time_split_across_lines),
}


def _the_teapot_sent_to_someone_else(state: dict[str, Any]) -> None:
    order = dict(state["orders"][-1], number="A1004", items={"teapot": 1}, delivery="standard", name="Mallory Intruder",
                 street="Lindenstraße 5", postcode="00000", city="Berlin", country="DE", discount_code="WELCOME10",
                 discount=360, status="processing")
    state["orders"].append(order)


NOT_DONE: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "the booking made, then cancelled": ("booking-budget-review", _the_booking_made_then_cancelled),
    "the order placed, then cancelled": ("shop-mugs-express", _the_order_placed_then_cancelled),
    "the order sent to someone else": ("shop-teapot-discount", _the_teapot_sent_to_someone_else),
    "the wrong keeper named beside the right one": ("wiki-keepers-page", _the_keepers_page_names_the_wrong_keeper),
}
"""Most of the work done, then undone or done for the wrong person: partial credit at most, never success."""


@pytest.mark.parametrize("attack", NOT_DONE)
def test_work_undone_or_misdirected_never_succeeds(attack: str) -> None:
    reward, components = _regraded_after(*NOT_DONE[attack])
    assert components["success"] == 0.0 and reward < 0.2, components


@pytest.mark.parametrize("attack", ATTACKS)
def test_vandalism_scores_zero(attack: str) -> None:
    reward, components = _regraded_after(*ATTACKS[attack])
    assert reward == 0.0, components


def test_honest_progress_still_earns_partial_credit() -> None:
    """Fixing the crossing time but not the ship's name: constructive progress counts, with its removal check."""
    state = _start_state("wiki-ferry-edit")
    page = state["pages"]["karsholm-ferry"]
    assert "55 minutes" in page["text"]
    _write_page(state, "karsholm-ferry", page["text"].replace("55 minutes", "40 minutes").replace("MS Tern", "ship"))
    reward, components = _regrade("wiki-ferry-edit", state)
    assert components["success"] == 0.0
    assert 0.0 < components["checks_frac"] < 1.0, components
    assert 0.0 < reward < 0.2


def test_one_right_deletion_earns_partial_credit() -> None:
    state = _start_state("board-sam-cleanup")
    del state["cards"][_card(state, "Prepare Q3 report")]
    _, components = _regrade("board-sam-cleanup", state)
    assert components["success"] == 0.0 and components["checks_frac"] > 0.0, components


def test_removal_checks_without_a_constructive_companion_earn_nothing() -> None:
    """A user task whose only check is a removal is graded on success alone: partial credit has nothing to count."""
    base = TASKS["board-sam-cleanup"]
    only_removals = dataclasses.replace(base, expect=tuple(e for e in base.expect if e.removal))
    state = _start_state("board-sam-cleanup")
    del state["cards"][_card(state, "Prepare Q3 report")]
    grade = asyncio.run(FAMILY.regrade(only_removals, {"state": state}, backend=None))  # type: ignore[arg-type]
    assert grade.components == {"success": 0.0, "checks_frac": 0.0}


def test_the_bundled_suite_loads_with_the_rule() -> None:
    assert {e.removal for t in load_suite("web-mini") for e in t.expect} == {True, False}


def _signed_out_after_signing_up(state: dict[str, Any]) -> None:
    state["users"]["river_song"] = dict(next(iter(state["users"].values())), email="river@example.org",
                                        password="Hello-Sweetie-42")
    state["current_user"] = None


def _a_wrong_booking_cancelled_then_the_right_one_made(state: dict[str, Any]) -> None:
    wrong = _booking("B004", "harbour", "2025-06-05", 13, 15, 6, "Budget review", "Lena Ortiz", "lena@example.com")
    right = _booking("B005", "harbour", "2025-06-05", 14, 16, 6, "Budget review", "Lena Ortiz", "lena@example.com")
    state["bookings"] += [wrong | {"status": "cancelled"}, right]


def _the_new_time_beside_the_old(state: dict[str, Any]) -> None:
    page = state["pages"]["karsholm-ferry"]
    _write_page(state, "karsholm-ferry", page["text"].replace("takes 55 minutes", "takes 40 minutes instead of\n"
                                                                                  "55 minutes"))
    page["last_summary"] = "Faster crossing"


HONEST: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "signed up, then signed out": ("accounts-sign-up", _signed_out_after_signing_up),
    "a wrong booking cancelled, then the right one made": ("booking-budget-review",
                                                           _a_wrong_booking_cancelled_then_the_right_one_made),
    "the new time written beside the old": ("wiki-ferry-edit", _the_new_time_beside_the_old),
}


@pytest.mark.parametrize("done", HONEST)
def test_honest_work_done_another_way_scores_one(done: str) -> None:
    """What the goal asks, done as a person might: a correction on the way, or words the checks did not foresee."""
    reward, components = _regraded_after(*HONEST[done])
    assert reward == 1.0, components
