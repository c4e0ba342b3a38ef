"""What every bundled web app shares: the base class, the page layout and accessible form controls.

Agents see a page as its ARIA snapshot, so every control made here has a label, and each app gives every button
and link an accessible name of its own on its page. User data is escaped here, in one place, never in the apps.
"""

from __future__ import annotations

import html
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NoReturn

from aiohttp import web

Options = Sequence[tuple[str, str]]
"""(value, label) pairs of a select or a radio group."""

STYLE = ("body{font-family:sans-serif;max-width:52rem;margin:1rem auto;padding:0 1rem}nav a,nav span{margin-right:1rem}"
         ".error{color:#b00020}[role=alert]{border:1px solid #b00020;padding:.5rem}[role=status]{background:#e8f5e9;"
         "padding:.5rem}table{border-collapse:collapse}td,th{padding:.25rem .5rem;text-align:left}"
         "li form{display:inline}")


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def field_id(name: str) -> str:
    return "f-" + re.sub(r"[^A-Za-z0-9_-]", "-", name)


def _invalid(name: str, error: str | None) -> tuple[str, str]:
    """The attributes that tie a control to its error message, and the message itself."""
    if not error:
        return "", ""
    eid = field_id(name) + "-error"
    return f' aria-invalid="true" aria-describedby="{eid}"', f' <span id="{eid}" class="error">{esc(error)}</span>'


def text_input(label: str, name: str, value: object = "", *, kind: str = "text", error: str | None = None,
               hint: str = "") -> str:
    """A labelled <input>: kind "text", "email" and "password" are textboxes, "number" a spinbutton."""
    attrs, message = _invalid(name, error)
    extra = f' <small>{esc(hint)}</small>' if hint else ""
    return (f'<p><label for="{field_id(name)}">{esc(label)}</label> <input id="{field_id(name)}" name="{esc(name)}" '
            f'type="{kind}" value="{esc(value)}"{attrs}>{extra}{message}</p>')


def textarea(label: str, name: str, value: str = "", *, error: str | None = None, rows: int = 6) -> str:
    attrs, message = _invalid(name, error)
    return (f'<p><label for="{field_id(name)}">{esc(label)}</label><br><textarea id="{field_id(name)}" '
            f'name="{esc(name)}" rows="{rows}" cols="70"{attrs}>{esc(value)}</textarea>{message}</p>')


def select(label: str, name: str, options: Options, selected: str = "", *, error: str | None = None) -> str:
    """A labelled <select> (a combobox); the agent picks an option by its label."""
    attrs, message = _invalid(name, error)
    items = "".join(f'<option value="{esc(v)}"{" selected" if v == selected else ""}>{esc(text)}</option>'
                    for v, text in options)
    return (f'<p><label for="{field_id(name)}">{esc(label)}</label> <select id="{field_id(name)}" '
            f'name="{esc(name)}"{attrs}>{items}</select>{message}</p>')


def checkbox(label: str, name: str, value: str = "on", *, checked: bool = False) -> str:
    cid = field_id(f"{name}-{value}")
    return (f'<p><input type="checkbox" id="{cid}" name="{esc(name)}" value="{esc(value)}"'
            f'{" checked" if checked else ""}> <label for="{cid}">{esc(label)}</label></p>')


def checkboxes(legend: str, name: str, options: Options, checked: Sequence[str]) -> str:
    """A group of checkboxes sharing one field name; the form sends the checked values."""
    items = "".join(checkbox(text, name, v, checked=v in checked) for v, text in options)
    return f"<fieldset><legend>{esc(legend)}</legend>{items}</fieldset>"


def radios(legend: str, name: str, options: Options, selected: str = "", *, error: str | None = None) -> str:
    _, message = _invalid(name, error)
    items = "".join(
        f'<p><input type="radio" id="{field_id(f"{name}-{v}")}" name="{esc(name)}" value="{esc(v)}"'
        f'{" checked" if v == selected else ""}> <label for="{field_id(f"{name}-{v}")}">{esc(text)}</label></p>'
        for v, text in options)
    return f"<fieldset><legend>{esc(legend)}</legend>{items}{message}</fieldset>"


def hidden(fields: Mapping[str, object]) -> str:
    return "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in fields.items())


def button(text: str, *, label: str | None = None, name: str | None = None, value: str | None = None) -> str:
    """A submit button; `label` is its accessible name when the visible text alone would repeat on the page."""
    attrs = f' aria-label="{esc(label)}"' if label else ""
    if name is not None:
        attrs += f' name="{esc(name)}" value="{esc(value or "")}"'
    return f"<button type=\"submit\"{attrs}>{esc(text)}</button>"


def form(action: str, body: str, *, method: str = "post") -> str:
    """A form the server validates (`novalidate`: the browser never blocks a submission)."""
    return f'<form method="{method}" action="{esc(action)}" novalidate>{body}</form>'


def action_button(action: str, text: str, *, label: str | None = None,
                  fields: Mapping[str, object] | None = None) -> str:
    """A one-button form that posts `fields` to `action` (add to cart, move a card, cancel a booking)."""
    return f'<form method="post" action="{esc(action)}">{hidden(fields or {})}{button(text, label=label)}</form>'


def link(href: str, text: str) -> str:
    return f'<a href="{esc(href)}">{esc(text)}</a>'


def error_summary(errors: Mapping[str, str]) -> str:
    if not errors:
        return ""
    items = "".join(f"<li>{esc(message)}</li>" for message in errors.values())
    return f'<div role="alert"><p>Please correct the following:</p><ul>{items}</ul></div>'


def money(cents: int) -> str:
    return f"€{cents // 100}.{cents % 100:02d}"


def parse_int(text: str, low: int, high: int) -> int | None:
    """An integer in [low, high], or None for anything else (the caller turns that into a form error)."""
    try:
        number = int(text.strip())
    except ValueError:
        return None
    return number if low <= number <= high else None


EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


async def form_data(request: web.Request) -> dict[str, str]:
    """A submitted form's fields, stripped; a field sent more than once keeps its first value."""
    data = await request.post()
    return {key: str(data.get(key, "")).strip() for key in data}


async def form_list(request: web.Request, name: str) -> list[str]:
    """Every value of a field sent more than once (a group of checkboxes)."""
    return [str(v) for v in (await request.post()).getall(name, [])]


class WebApp(ABC):
    """One app instance: its state lives on this object, for one episode; `state()` is what tasks check.

    Subclasses set `title`, `blurb` and `setup_keys`, and implement `routes`, `nav` and `state`."""

    title: ClassVar[str]
    blurb: ClassVar[str]
    """What the app is, for the agent's instruction: "an online housewares shop"."""
    setup_keys: ClassVar[frozenset[str]] = frozenset()
    """The keys a task's `setup` may set to start from other state than the seed."""

    def __init__(self, setup: Mapping[str, Any] | None = None) -> None:
        unknown = sorted(set(setup or {}) - self.setup_keys)
        if unknown:
            takes = ", ".join(sorted(self.setup_keys)) or "none"
            raise ValueError(f"unknown setup key(s) {', '.join(unknown)} (this app takes: {takes})")
        self._notice: str | None = None

    @abstractmethod
    def routes(self) -> list[web.RouteDef]: ...

    @abstractmethod
    def nav(self) -> list[tuple[str, str]]:
        """The main navigation as (path, link text)."""

    @abstractmethod
    def state(self) -> dict[str, Any]:
        """Everything a task may check, JSON-shaped."""

    def header(self) -> str:
        """Extra markup under the navigation on every page (a search form)."""
        return ""

    def page(self, request: web.Request, heading: str, body: str, *, status: int = 200) -> web.Response:
        """A whole page. The navigation item of the page itself is plain text, so no link repeats a name on it."""
        items = "".join(f'<span aria-current="page">{esc(text)}</span>' if href == request.path else link(href, text)
                        for href, text in self.nav())
        notice, self._notice = self._notice, None
        status_line = f'<p role="status">{esc(notice)}</p>' if notice else ""
        document = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(heading)} — '
                    f'{esc(self.title)}</title><style>{STYLE}</style></head><body><header><p><strong>'
                    f'{esc(self.title)}</strong></p><nav aria-label="Main">{items}</nav>{self.header()}</header>'
                    f"<main><h1>{esc(heading)}</h1>{status_line}{body}</main></body></html>")
        return web.Response(text=document, content_type="text/html", status=status)

    def redirect(self, location: str, notice: str | None = None) -> NoReturn:
        """Answer a form with 303 See Other (so reloading never resubmits), showing `notice` on the next page."""
        self._notice = notice
        raise web.HTTPSeeOther(location)

    def application(self) -> web.Application:
        """The aiohttp application serving this instance; a missing page renders with the navigation."""

        @web.middleware
        async def friendly_errors(request: web.Request, handler: Any) -> web.StreamResponse:
            try:
                return await handler(request)
            except web.HTTPNotFound:
                body = f"<p>There is no page at {esc(request.path)}. Use the navigation above.</p>"
                return self.page(request, "Page not found", body, status=404)
            except web.HTTPMethodNotAllowed:
                body = f"<p>{esc(request.path)} only answers a form's submission. Use the navigation above.</p>"
                return self.page(request, "Not a page", body, status=405)

        application = web.Application(middlewares=[friendly_errors])
        application.add_routes(self.routes())
        return application
