"""Tasks board, a team's kanban board: cards in To do, In progress and Done, moved by buttons on the board or
edited on their own page (title, description, column, assignee, priority), created and deleted. Card titles are
unique (the server refuses a second card of the same title), but editable: the state keys cards by their id, which
nothing changes, so a check on `cards.c2` follows that card through a rename (a card renamed into another's title
is not that card), and a new card is found by its title (`cards.[title=...]`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from aiohttp import web

from .common import (
    WebApp,
    action_button,
    button,
    error_summary,
    esc,
    form,
    form_data,
    link,
    radios,
    select,
    text_input,
    textarea,
)

COLUMNS = (("todo", "To do"), ("in-progress", "In progress"), ("done", "Done"))
PEOPLE = (("", "Unassigned"), ("priya", "Priya Shah"), ("marco", "Marco Rossi"), ("sam", "Sam Lee"))
PRIORITIES = (("low", "Low"), ("medium", "Medium"), ("high", "High"))


@dataclass
class Card:
    title: str
    status: str
    assignee: str
    priority: str
    description: str = ""


SEED = (
    Card("Fix login bug", "in-progress", "marco", "high", "Users with a + in their email cannot sign in."),
    Card("Update privacy policy", "todo", "priya", "medium", "Add the new analytics provider."),
    Card("Write onboarding guide", "todo", "marco", "low"),
    Card("Migrate database", "in-progress", "marco", "high", "Move from version 13 to 16."),
    Card("Design new logo", "done", "marco", "medium"),
    Card("Prepare Q3 report", "todo", "sam", "medium"),
    Card("Refresh test data", "todo", "sam", "low"),
    Card("Review pull requests", "in-progress", "sam", "medium"),
)


class Board(WebApp):
    title = "Tasks board"
    blurb = "a team's task board with To do, In progress and Done columns"

    def __init__(self, setup: Mapping[str, Any] | None = None) -> None:
        super().__init__(setup)
        self.cards = {f"c{i}": Card(**asdict(card)) for i, card in enumerate(SEED, 1)}
        self.next_id = len(self.cards) + 1

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/", self.board), web.post("/cards/{id}/move", self.move),
                web.get("/cards/new", self.new_form), web.post("/cards/new", self.create),
                web.get("/cards/{id}", self.card), web.post("/cards/{id}", self.save),
                web.post("/cards/{id}/delete", self.delete)]

    def nav(self) -> list[tuple[str, str]]:
        return [("/", "Board"), ("/cards/new", "New card")]

    def state(self) -> dict[str, Any]:
        return {"cards": {cid: asdict(c) for cid, c in self.cards.items()}}

    def _card(self, request: web.Request) -> Card:
        card = self.cards.get(request.match_info["id"])
        if card is None:
            raise web.HTTPNotFound()
        return card

    async def board(self, request: web.Request) -> web.Response:
        who = request.query.get("assignee", "all")
        people = dict(PEOPLE)
        columns = []
        for status, heading in COLUMNS:
            items = []
            for cid, c in self.cards.items():
                if c.status != status or (who != "all" and c.assignee != who):
                    continue
                moves = "".join(action_button(f"/cards/{cid}/move", f"Move to {name}",
                                              label=f"Move {c.title} to {name}", fields={"status": other})
                                for other, name in COLUMNS if other != status)
                items.append(f"<li>{link(f'/cards/{cid}', c.title)} — {esc(people[c.assignee])}, {esc(c.priority)} "
                             f"priority {moves}</li>")
            columns.append(f"<section><h2>{esc(heading)}</h2><ul>{''.join(items) or '<li>No cards</li>'}</ul>"
                           "</section>")
        choices = (("all", "Everyone"), *PEOPLE[1:], ("", "Unassigned"))
        filters = form("/", select("Show cards of", "assignee", choices, who) + button("Filter"), method="get")
        return self.page(request, "Board", filters + "".join(columns))

    async def move(self, request: web.Request) -> web.Response:
        card = self._card(request)
        status = (await form_data(request)).get("status", "")
        if status not in dict(COLUMNS):
            self.redirect("/", "Choose a column to move the card to.")
        card.status = status
        self.redirect("/", f"Moved {card.title} to {dict(COLUMNS)[status]}.")

    def _fields(self, values: Mapping[str, str], errors: dict[str, str]) -> str:
        return (text_input("Title", "title", values.get("title", ""), error=errors.get("title"))
                + textarea("Description", "description", values.get("description", ""), rows=4)
                + select("Column", "status", COLUMNS, values.get("status", "todo"), error=errors.get("status"))
                + select("Assignee", "assignee", PEOPLE, values.get("assignee", ""), error=errors.get("assignee"))
                + radios("Priority", "priority", PRIORITIES, values.get("priority", "medium"),
                         error=errors.get("priority")))

    def _validate(self, values: dict[str, str], cid: str | None) -> dict[str, str]:
        errors = {}
        title = values["title"] = " ".join(values.get("title", "").split())
        if not 1 <= len(title) <= 60:
            errors["title"] = "A card's title has 1 to 60 characters."
        elif "." in title:
            errors["title"] = "A card's title cannot contain a full stop."
        elif any(c.title.casefold() == title.casefold() for i, c in self.cards.items() if i != cid):
            errors["title"] = f"There is already a card called {title}."
        for key, options in (("status", COLUMNS), ("assignee", PEOPLE), ("priority", PRIORITIES)):
            if values.get(key) not in dict(options):
                errors[key] = f"Choose a {key.replace('status', 'column')} from the list."
        return errors

    def _card_values(self, values: dict[str, str]) -> dict[str, str]:
        fields = {key: values.get(key, "") for key in ("title", "status", "assignee", "priority", "description")}
        return fields | {"description": fields["description"].replace("\r\n", "\n")}

    async def new_form(self, request: web.Request) -> web.Response:
        return self.page(request, "New card", form("/cards/new", self._fields({}, {}) + button("Create card")))

    async def create(self, request: web.Request) -> web.Response:
        values = await form_data(request)
        errors = self._validate(values, None)
        if errors:
            body = error_summary(errors) + form("/cards/new", self._fields(values, errors) + button("Create card"))
            return self.page(request, "New card", body, status=422)
        cid, self.next_id = f"c{self.next_id}", self.next_id + 1
        self.cards[cid] = Card(**self._card_values(values))
        self.redirect("/", f"Created the card {values['title']}.")

    def _card_page(self, request: web.Request, cid: str, values: Mapping[str, str], errors: dict[str, str],
                   ) -> web.Response:
        title = self.cards[cid].title
        body = (error_summary(errors) + form(f"/cards/{cid}", self._fields(values, errors) + button("Save card"))
                + action_button(f"/cards/{cid}/delete", "Delete card")
                + f"<p>{link('/', 'Back to the board')}</p>")
        return self.page(request, title, body, status=422 if errors else 200)

    async def card(self, request: web.Request) -> web.Response:
        card = self._card(request)
        return self._card_page(request, request.match_info["id"], asdict(card), {})

    async def save(self, request: web.Request) -> web.Response:
        card, cid = self._card(request), request.match_info["id"]
        values = await form_data(request)
        errors = self._validate(values, cid)
        if errors:
            return self._card_page(request, cid, values, errors)
        for key, value in self._card_values(values).items():
            setattr(card, key, value)
        self.redirect("/", f"Saved the card {card.title}.")

    async def delete(self, request: web.Request) -> web.Response:
        card = self._card(request)
        del self.cards[request.match_info["id"]]
        self.redirect("/", f"Deleted the card {card.title}.")
