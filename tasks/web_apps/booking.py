"""Harbourside Rooms, meeting rooms booked in three steps (when and for how many → which room → who), with
capacity and clashes checked by the server at every step, and a list of bookings that can be cancelled. The
bookable week is Monday 2 to Friday 6 June 2025; three bookings are seeded and new ones appended."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from .common import (
    EMAIL,
    WebApp,
    action_button,
    button,
    error_summary,
    esc,
    form,
    form_data,
    hidden,
    link,
    parse_int,
    select,
    text_input,
)


@dataclass(frozen=True)
class Room:
    name: str
    capacity: int
    equipment: str


ROOMS = {"lantern": Room("Lantern", 2, "phone and screen"), "fjord": Room("Fjord", 6, "screen"),
         "harbour": Room("Harbour", 8, "projector and whiteboard"),
         "summit": Room("Summit", 14, "projector and video conferencing")}
DAYS = (("2025-06-02", "Monday 2 June"), ("2025-06-03", "Tuesday 3 June"), ("2025-06-04", "Wednesday 4 June"),
        ("2025-06-05", "Thursday 5 June"), ("2025-06-06", "Friday 6 June"))
STARTS = tuple((f"{h:02d}:00", f"{h:02d}:00") for h in range(8, 18))
DURATIONS = (("1", "1 hour"), ("2", "2 hours"), ("3", "3 hours"), ("4", "4 hours"))
CLOSING_HOUR = 18
SLOT_FIELDS = ("date", "start", "hours", "people")


def _booking(ref: str, room: str, date: str, start: int, end: int, people: int, title: str, name: str,
             email: str) -> dict[str, Any]:
    return {"ref": ref, "room": room, "date": date, "start": f"{start:02d}:00", "end": f"{end:02d}:00",
            "people": people, "title": title, "name": name, "email": email, "status": "confirmed"}


class Booking(WebApp):
    title = "Harbourside Rooms"
    blurb = "a meeting-room booking site"

    def __init__(self, setup: Mapping[str, Any] | None = None) -> None:
        super().__init__(setup)
        self.bookings = [
            _booking("B001", "fjord", "2025-06-04", 9, 11, 5, "Quarterly planning", "Mia Chen", "mia@example.com"),
            _booking("B002", "fjord", "2025-06-03", 10, 11, 3, "Design sync", "Lena Ortiz", "lena@example.com"),
            _booking("B003", "summit", "2025-06-05", 9, 17, 12, "Offsite workshop", "Tom Berg", "tom@example.com"),
        ]

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/", self.rooms), web.get("/book", self.when), web.get("/book/rooms", self.which),
                web.get("/book/details", self.details), web.post("/book/confirm", self.confirm),
                web.get("/bookings", self.booking_list), web.get("/bookings/{ref}", self.booking),
                web.post("/bookings/{ref}/cancel", self.cancel)]

    def nav(self) -> list[tuple[str, str]]:
        return [("/", "Rooms"), ("/book", "Book a room"), ("/bookings", "My bookings")]

    def state(self) -> dict[str, Any]:
        return {"bookings": self.bookings}

    async def rooms(self, request: web.Request) -> web.Response:
        rows = "".join(f"<tr><td>{esc(r.name)}</td><td>{r.capacity}</td><td>{esc(r.equipment)}</td></tr>"
                       for r in ROOMS.values())
        body = ("<p>Four meeting rooms on the harbour front, bookable by the hour from 08:00 to 18:00, Monday to "
                "Friday.</p><table><thead><tr><th>Room</th><th>Seats</th><th>Equipment</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")
        return self.page(request, "Our rooms", body)

    # --- step 1: when and for how many ---------------------------------------------------------------------

    def _slot(self, values: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
        """The requested slot (date, start and end hours, people) and what is wrong with it."""
        errors = {}
        if values.get("date") not in dict(DAYS):
            errors["date"] = "Choose a day from the list."
        if values.get("start") not in dict(STARTS):
            errors["start"] = "Choose a start time from the list."
        if values.get("hours") not in dict(DURATIONS):
            errors["hours"] = "Choose how long the meeting lasts."
        people = parse_int(values.get("people", ""), 1, 20)
        if people is None:
            errors["people"] = "Enter the number of people, from 1 to 20."
        if errors:
            return {}, errors
        start = int(values["start"][:2])
        end = start + int(values["hours"])
        if end > CLOSING_HOUR:
            return {}, {"hours": f"The rooms close at {CLOSING_HOUR}:00: choose an earlier start or a shorter meeting."}
        return {"date": values["date"], "start": start, "end": end, "people": people}, {}

    def _clash(self, room: str, slot: dict[str, Any]) -> dict[str, Any] | None:
        return next((b for b in self.bookings if b["room"] == room and b["date"] == slot["date"]
                     and b["status"] == "confirmed" and int(b["start"][:2]) < slot["end"]
                     and slot["start"] < int(b["end"][:2])), None)

    @staticmethod
    def _describe(slot: dict[str, Any]) -> str:
        return (f"{dict(DAYS)[slot['date']]}, {slot['start']:02d}:00 to {slot['end']:02d}:00, for {slot['people']} "
                f"{'person' if slot['people'] == 1 else 'people'}")

    def _when_page(self, request: web.Request, values: Mapping[str, str], errors: dict[str, str]) -> web.Response:
        fields = (select("Date", "date", (("", "Choose a day"), *DAYS), values.get("date", ""),
                         error=errors.get("date"))
                  + select("Start time", "start", STARTS, values.get("start", "09:00"), error=errors.get("start"))
                  + select("Duration", "hours", DURATIONS, values.get("hours", "1"), error=errors.get("hours"))
                  + text_input("Number of people", "people", values.get("people", "2"), kind="number",
                               error=errors.get("people")))
        body = error_summary(errors) + form("/book/rooms", fields + button("Find available rooms"), method="get")
        return self.page(request, "Book a room", body, status=422 if errors else 200)

    async def when(self, request: web.Request) -> web.Response:
        return self._when_page(request, request.query, {})

    # --- step 2: which room --------------------------------------------------------------------------------

    async def which(self, request: web.Request) -> web.Response:
        slot, errors = self._slot(request.query)
        if errors:
            return self._when_page(request, request.query, errors)
        query = {key: request.query[key] for key in SLOT_FIELDS}
        items = []
        for key, room in ROOMS.items():
            if room.capacity < slot["people"]:
                items.append(f"<li>{esc(room.name)}: too small (seats {room.capacity})</li>")
            elif self._clash(key, slot):
                items.append(f"<li>{esc(room.name)}: already booked at that time</li>")
            else:
                choose = form("/book/details", hidden({**query, "room": key}) + button(f"Choose {room.name}"),
                              method="get")
                items.append(f"<li>{esc(room.name)}: free, seats {room.capacity}, {esc(room.equipment)} {choose}</li>")
        body = (f"<p>{esc(self._describe(slot))}:</p><ul>{''.join(items)}</ul>"
                f"<p>{link('/book?' + urlencode(query), 'Change the day, time or number of people')}</p>")
        return self.page(request, "Choose a room", body)

    # --- step 3: who ---------------------------------------------------------------------------------------

    def _available(self, values: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        """The chosen room and slot; back to step 2 when the room cannot take the meeting."""
        slot, errors = self._slot(values)
        if errors:
            self.redirect("/book", "Choose the day, time and number of people again.")
        room = values.get("room", "")
        query = urlencode({key: values[key] for key in SLOT_FIELDS})
        if room not in ROOMS or ROOMS[room].capacity < slot["people"] or self._clash(room, slot):
            self.redirect(f"/book/rooms?{query}", "That room cannot take this meeting: choose another.")
        return room, slot

    def _details_page(self, request: web.Request, values: Mapping[str, str], errors: dict[str, str],
                      ) -> web.Response:
        room, slot = self._available(values)
        fields = (hidden({key: values[key] for key in (*SLOT_FIELDS, "room")})
                  + text_input("Meeting title", "title", values.get("title", ""), error=errors.get("title"))
                  + text_input("Your name", "name", values.get("name", ""), error=errors.get("name"))
                  + text_input("Email", "email", values.get("email", ""), kind="email", error=errors.get("email")))
        body = (error_summary(errors) + f"<p>{esc(ROOMS[room].name)}, {esc(self._describe(slot))}.</p>"
                + form("/book/confirm", fields + button("Confirm booking")))
        return self.page(request, "Your details", body, status=422 if errors else 200)

    async def details(self, request: web.Request) -> web.Response:
        return self._details_page(request, request.query, {})

    async def confirm(self, request: web.Request) -> web.Response:
        values = await form_data(request)
        room, slot = self._available(values)
        errors = {}
        if not 1 <= len(values.get("title", "")) <= 60:
            errors["title"] = "Give the meeting a title of 1 to 60 characters."
        if not values.get("name"):
            errors["name"] = "Enter your name."
        if not EMAIL.match(values.get("email", "")):
            errors["email"] = "Enter a valid email address, like name@example.org."
        if errors:
            return self._details_page(request, values, errors)
        ref = f"B{len(self.bookings) + 1:03d}"
        self.bookings.append(_booking(ref, room, slot["date"], slot["start"], slot["end"], slot["people"],
                                      values["title"], values["name"], values["email"]))
        self.redirect(f"/bookings/{ref}", f"Booking confirmed. Your reference is {ref}.")

    # --- bookings ------------------------------------------------------------------------------------------

    async def booking_list(self, request: web.Request) -> web.Response:
        rows = "".join(f"<tr><td>{link('/bookings/' + b['ref'], 'Booking ' + b['ref'])}</td><td>{esc(b['title'])}"
                       f"</td><td>{esc(ROOMS[b['room']].name)}</td><td>{dict(DAYS)[b['date']]}</td><td>{b['start']}–"
                       f"{b['end']}</td><td>{b['status']}</td></tr>" for b in self.bookings)
        body = ("<table><thead><tr><th>Reference</th><th>Meeting</th><th>Room</th><th>Day</th><th>Time</th>"
                f"<th>Status</th></tr></thead><tbody>{rows}</tbody></table>")
        return self.page(request, "My bookings", body)

    async def booking(self, request: web.Request) -> web.Response:
        b = next((b for b in self.bookings if b["ref"] == request.match_info["ref"]), None)
        if b is None:
            raise web.HTTPNotFound()
        body = (f"<p>{esc(b['title'])}: {esc(ROOMS[b['room']].name)}, {dict(DAYS)[b['date']]}, {b['start']} to "
                f"{b['end']}, for {b['people']} people.</p><p>Booked by {esc(b['name'])} ({esc(b['email'])}). "
                f"Status: {b['status']}.</p>")
        if b["status"] == "confirmed":
            body += action_button(f"/bookings/{b['ref']}/cancel", f"Cancel booking {b['ref']}")
        return self.page(request, f"Booking {b['ref']}", body)

    async def cancel(self, request: web.Request) -> web.Response:
        b = next((b for b in self.bookings if b["ref"] == request.match_info["ref"]), None)
        if b is None:
            raise web.HTTPNotFound()
        b["status"] = "cancelled"
        self.redirect("/bookings", f"Booking {b['ref']} ({b['title']}) has been cancelled.")
