"""The Karsholm Wiki, about a fictional island (so no agent knows its facts beforehand): linked articles,
search, editing, page creation and an answer form where a task asks the agent to submit a fact it found.

Page text is plain: paragraphs split by a blank line, `* ` list items, `[[slug]]` or `[[slug|label]]` links.
Answers are kept normalized (spaces collapsed, case folded, a final full stop dropped), so "Per  Halvorsen."
and "per halvorsen" are the same answer."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .common import WebApp, button, error_summary, esc, form, form_data, link, text_input, textarea

LINK = re.compile(r"\[\[([a-z0-9-]+)(?:\|([^\]]+))?\]\]")


@dataclass
class Page:
    title: str
    text: str
    summaries: list[str] = field(default_factory=lambda: ["Created page"])
    """The edit summary of every revision, oldest first."""


SEED = {
    "main-page": Page("Main page", """Welcome to the Karsholm Wiki, the encyclopedia of the island of Karsholm that
anyone can edit.

Start with [[karsholm|the island]] or its only town, [[vessby|Vessby]]. Popular articles:

* [[north-point-lighthouse|North Point Lighthouse]]
* [[karsholm-ferry|The ferry]]
* [[herring-festival|The Herring Festival]]
* [[old-mill|The old mill]]"""),
    "karsholm": Page("Karsholm", """Karsholm is a small island off the west coast, 14 kilometres long and 5 wide.
At the 2021 census it had 4,212 inhabitants, most of them in [[vessby|Vessby]], the only town.

The island has two lighthouses: [[north-point-lighthouse|North Point]] at its northern tip and
[[south-reef-lighthouse|South Reef]] on a rock off the southern shore. It is reached by [[karsholm-ferry|ferry]]
from Hallen on the mainland.

Fishing was the main trade until the 1960s; today most islanders work in tourism, which peaks during the
[[herring-festival|Herring Festival]] in August."""),
    "vessby": Page("Vessby", """Vessby is the only town on [[karsholm|Karsholm]], on the sheltered east coast. It
was granted a market charter in 1342.

The town is run by a council led by a mayor; see the [[mayors-of-vessby|list of mayors of Vessby]]. The harbour is
the terminal of the [[karsholm-ferry|Karsholm ferry]].

Landmarks include the [[old-mill|old windmill]] and the harbour front, where the
[[herring-festival|Herring Festival]] is held."""),
    "north-point-lighthouse": Page("North Point Lighthouse", """North Point Lighthouse stands on the northern tip of
[[karsholm|Karsholm]]. It was first lit in 1887. Its granite tower is 31 metres tall, and its light can be seen
22 nautical miles away.

Keepers lived at the station until it was automated in 1979. The longest-serving keeper was Ingrid Solberg, who
kept the light from 1921 to 1958.

The island's other lighthouse is [[south-reef-lighthouse|South Reef]]."""),
    "south-reef-lighthouse": Page("South Reef Lighthouse", """South Reef Lighthouse was built on a rock off the
southern shore of [[karsholm|Karsholm]] and first lit in 1902. Its cast iron tower is 24 metres tall.

It was decommissioned in 1994, when a buoy replaced it, and has been a small museum since 2005. Compare
[[north-point-lighthouse|North Point Lighthouse]], the island's older light."""),
    "karsholm-ferry": Page("Karsholm ferry", """The Karsholm ferry links [[vessby|Vessby]] with Hallen on the
mainland. The crossing takes 55 minutes.

Since 2019 the route has been served by the MS Tern, which carries 180 passengers and 24 cars. There are four
departures a day in each direction, and six in July and August."""),
    "herring-festival": Page("Herring Festival", """The Herring Festival is held on the harbour front of
[[vessby|Vessby]] on the second weekend of August. It was first held in 1951 to mark the end of the herring
season, and now draws about 10,000 visitors."""),
    "mayors-of-vessby": Page("List of mayors of Vessby", """The mayors of [[vessby|Vessby]] since the office was
created:

* 1922–1938: Elin Berg
* 1938–1946: Oskar Lund
* 1946–1954: Per Halvorsen
* 1954–1970: Maja Strand
* 1970–1990: Tor Eklund
* 1990–2014: Sara Nyberg
* since 2014: Jon Vik"""),
    "old-mill": Page("Old mill", """The old mill is a wooden post mill on the hill above [[vessby|Vessby]]. It was
built in 1790, ground grain until 1931, and was restored in 2008. It is open to visitors on summer Sundays."""),
    "karsholm-dialect": Page("Karsholm dialect", """Karsholmsk, the dialect of [[karsholm|Karsholm]], is spoken by
about 300 people, most of them over sixty. It keeps many old words for weather and the sea: a brannvik is a
sheltered cove, and a skarv is a sudden squall."""),
}
"""The seed. Nothing links to the dialect page: only search finds it."""


def normalize_answer(text: str) -> str:
    return " ".join(text.split()).casefold().rstrip(".").strip()


def slug_of(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.casefold()).strip("-")


class Wiki(WebApp):
    title = "Karsholm Wiki"
    blurb = "a small wiki about the island of Karsholm"

    def __init__(self, setup: Mapping[str, Any] | None = None) -> None:
        super().__init__(setup)
        self.pages = {slug: Page(p.title, p.text, list(p.summaries)) for slug, p in SEED.items()}
        self.answers: list[str] = []

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/", self.main), web.get("/wiki/{slug}", self.article),
                web.get("/wiki/{slug}/edit", self.edit_form), web.post("/wiki/{slug}/edit", self.edit),
                web.get("/search", self.search), web.get("/changes", self.changes), web.get("/new", self.create_form),
                web.post("/new", self.create), web.get("/answer", self.answer_form), web.post("/answer", self.answer)]

    def nav(self) -> list[tuple[str, str]]:
        return [("/", "Main page"), ("/search", "Search"), ("/changes", "Recent changes"), ("/new", "Create a page"),
                ("/answer", "Submit an answer")]

    def state(self) -> dict[str, Any]:
        pages = {slug: {"title": p.title, "text": p.text, "reads": self._plain(p.text), "revisions": len(p.summaries),
                        "last_summary": p.summaries[-1]} for slug, p in self.pages.items()}
        return {"pages": pages, "answers": self.answers, "answer": self.answers[-1] if self.answers else None}

    # --- reading -------------------------------------------------------------------------------------------

    def _inline(self, text: str) -> str:
        out, at = [], 0
        for match in LINK.finditer(text):
            slug, label = match.group(1), match.group(2)
            target = self.pages.get(slug)
            out += [esc(text[at:match.start()]), link(f"/wiki/{slug}", label or (target.title if target else slug))]
            at = match.end()
        return "".join(out) + esc(text[at:])

    def _render(self, text: str) -> str:
        blocks = []
        for block in re.split(r"\n\s*\n", text.strip()):
            lines = [line.strip() for line in block.splitlines() if line.strip()]
            if lines and all(line.startswith("* ") for line in lines):
                blocks.append("<ul>" + "".join(f"<li>{self._inline(line[2:])}</li>" for line in lines) + "</ul>")
            else:
                blocks.append(f"<p>{self._inline(' '.join(lines))}</p>")
        return "".join(blocks)

    @staticmethod
    def _plain(text: str) -> str:
        return " ".join(LINK.sub(lambda m: m.group(2) or m.group(1), text).split())

    def _article(self, request: web.Request, slug: str, heading: str | None = None) -> web.Response:
        page = self.pages.get(slug)
        if page is None:
            raise web.HTTPNotFound()
        body = self._render(page.text) + f"<p>{link(f'/wiki/{slug}/edit', 'Edit this page')}</p>"
        return self.page(request, heading or page.title, body)

    async def main(self, request: web.Request) -> web.Response:
        return self._article(request, "main-page", "Karsholm Wiki")

    async def article(self, request: web.Request) -> web.Response:
        return self._article(request, request.match_info["slug"])

    async def search(self, request: web.Request) -> web.Response:
        query = request.query.get("q", "").strip()
        words = query.casefold().split()
        box = form("/search", text_input("Search the wiki", "q", query) + button("Search"), method="get")
        hits = [(slug, p) for slug, p in self.pages.items()
                if words and all(w in f"{p.title} {self._plain(p.text)}".casefold() for w in words)]
        if not query:
            results = ""
        elif not hits:
            results = f"<p>No page mentions “{esc(query)}”.</p>"
        else:
            items = "".join(f"<li>{link(f'/wiki/{slug}', p.title)}: {esc(self._plain(p.text)[:120])}…</li>"
                            for slug, p in sorted(hits, key=lambda hit: hit[1].title))
            results = f"<p>{len(hits)} pages mention “{esc(query)}”:</p><ul>{items}</ul>"
        return self.page(request, "Search", box + results)

    async def changes(self, request: web.Request) -> web.Response:
        edits = [f"<li>{esc(p.title)}: {esc(summary)}</li>" for p in self.pages.values() for summary in p.summaries[1:]]
        body = f"<ul>{''.join(reversed(edits))}</ul>" if edits else "<p>Nobody has edited a page yet.</p>"
        return self.page(request, "Recent changes", body)

    # --- writing -------------------------------------------------------------------------------------------

    def _edit_page(self, request: web.Request, slug: str, text: str, summary: str = "",
                   errors: dict[str, str] | None = None) -> web.Response:
        errors = errors or {}
        fields = (textarea("Page text", "text", text, error=errors.get("text"), rows=14)
                  + text_input("Edit summary", "summary", summary, error=errors.get("summary"),
                               hint="Say briefly what you changed."))
        body = (error_summary(errors) + form(f"/wiki/{slug}/edit", fields + button("Save page"))
                + "<p>Link to a page with [[page-name]] or [[page-name|the link's text]]; start list items with * .</p>"
                + f"<p>{link(f'/wiki/{slug}', 'Back to the page without saving')}</p>")
        return self.page(request, f"Editing {self.pages[slug].title}", body, status=422 if errors else 200)

    async def edit_form(self, request: web.Request) -> web.Response:
        slug = request.match_info["slug"]
        if slug not in self.pages:
            raise web.HTTPNotFound()
        return self._edit_page(request, slug, self.pages[slug].text)

    async def edit(self, request: web.Request) -> web.Response:
        slug = request.match_info["slug"]
        if slug not in self.pages:
            raise web.HTTPNotFound()
        values = await form_data(request)
        text, summary = values.get("text", "").replace("\r\n", "\n"), values.get("summary", "")
        errors = {}
        if not text:
            errors["text"] = "A page cannot be empty."
        if not 1 <= len(summary) <= 100:
            errors["summary"] = "Describe your change in the edit summary (at most 100 characters)."
        if errors:
            return self._edit_page(request, slug, text, summary, errors)
        page = self.pages[slug]
        page.text = text
        page.summaries.append(summary)
        self.redirect(f"/wiki/{slug}", "Your edit has been saved.")

    def _create_page(self, request: web.Request, values: dict[str, str], errors: dict[str, str]) -> web.Response:
        fields = (text_input("Title", "title", values.get("title", ""), error=errors.get("title"))
                  + textarea("Page text", "text", values.get("text", ""), error=errors.get("text"), rows=10))
        body = error_summary(errors) + form("/new", fields + button("Create page"))
        return self.page(request, "Create a page", body, status=422 if errors else 200)

    async def create_form(self, request: web.Request) -> web.Response:
        return self._create_page(request, {}, {})

    async def create(self, request: web.Request) -> web.Response:
        values = await form_data(request)
        title, text = " ".join(values.get("title", "").split()), values.get("text", "").replace("\r\n", "\n")
        slug = slug_of(title)
        errors = {}
        if not 3 <= len(title) <= 60 or not slug:
            errors["title"] = "A title has 3 to 60 characters, with at least one letter or digit."
        elif slug in self.pages:
            errors["title"] = f"A page called {self.pages[slug].title} already exists."
        if not text:
            errors["text"] = "A page cannot be empty."
        if errors:
            return self._create_page(request, values, errors)
        self.pages[slug] = Page(title, text)
        self.redirect(f"/wiki/{slug}", f"The page {title} has been created.")

    # --- answers -------------------------------------------------------------------------------------------

    def _answer_page(self, request: web.Request, error: str | None = None) -> web.Response:
        body = (error_summary({"answer": error} if error else {})
                + "<p>Found what you were looking for? Submit your answer here.</p>"
                + form("/answer", text_input("Answer", "answer", error=error) + button("Submit answer")))
        return self.page(request, "Submit an answer", body, status=422 if error else 200)

    async def answer_form(self, request: web.Request) -> web.Response:
        return self._answer_page(request)

    async def answer(self, request: web.Request) -> web.Response:
        answer = normalize_answer((await form_data(request)).get("answer", ""))
        if not answer:
            return self._answer_page(request, "Type your answer before submitting it.")
        self.answers.append(answer)
        self.redirect("/answer", "Thank you: your answer has been recorded.")
