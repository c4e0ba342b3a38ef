"""Lumen Accounts, an account portal: sign-up with validation errors, sign-in, settings (selects, checkboxes and
radio buttons), a password change and a contact form. Three users are seeded; passwords are kept in the clear
because the state is what tasks check. One browser uses an instance, so the signed-in user is the app's."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web

from .common import (
    EMAIL,
    WebApp,
    action_button,
    button,
    checkbox,
    checkboxes,
    error_summary,
    esc,
    form,
    form_data,
    form_list,
    radios,
    select,
    text_input,
    textarea,
)

LANGUAGES = (("en", "English"), ("fr", "Français"), ("de", "Deutsch"), ("es", "Español"), ("nl", "Nederlands"))
TIMEZONES = tuple((z, z) for z in ("UTC", "Europe/London", "Europe/Paris", "Europe/Berlin", "America/New_York",
                                   "Asia/Tokyo"))
NOTIFICATIONS = (("digest", "Weekly digest"), ("updates", "Product updates"), ("security", "Security alerts"))
THEMES = (("light", "Light"), ("dark", "Dark"), ("system", "Same as my device"))
TOPICS = (("", "Choose a topic"), ("billing", "Billing"), ("support", "Technical support"),
          ("feedback", "Feedback"), ("other", "Other"))
USERNAME = re.compile(r"^[a-z0-9_]{3,20}$")
USERNAME_RULE = "3 to 20 characters: lowercase letters, digits or underscores."
PASSWORD_RULE = "at least 10 characters, including a digit."


@dataclass
class User:
    email: str
    password: str
    display_name: str
    language: str = "en"
    timezone: str = "UTC"
    notifications: list[str] = field(default_factory=lambda: ["security"])
    """Sorted."""
    theme: str = "system"


def _password_problem(password: str) -> str | None:
    return None if len(password) >= 10 and any(c.isdigit() for c in password) else f"A password needs {PASSWORD_RULE}"


class Accounts(WebApp):
    title = "Lumen Accounts"
    blurb = "an account portal with sign-up, settings and a contact form"
    setup_keys = frozenset({"signed_in"})

    def __init__(self, setup: Mapping[str, Any] | None = None) -> None:
        super().__init__(setup)
        self.users = {
            "alice": User("alice@example.org", "Wonderland-42", "Alice Liddell", "en", "Europe/London",
                          ["security", "updates"], "light"),
            "bob": User("bob@example.org", "Builder-2024", "Bob Ng", "en", "Europe/Berlin", ["security"]),
            "dana": User("dana@example.org", "Scully-1013x", "Dana Scully", "en", "America/New_York",
                         ["digest", "security", "updates"]),
        }
        self.current_user: str | None = (setup or {}).get("signed_in")
        if self.current_user is not None and self.current_user not in self.users:
            raise ValueError(f"signed_in: no user {self.current_user!r} (users: {', '.join(self.users)})")
        self.messages: list[dict[str, Any]] = []

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/", self.home), web.get("/signup", self.signup_form), web.post("/signup", self.signup),
                web.get("/signin", self.signin_form), web.post("/signin", self.signin),
                web.post("/signout", self.signout), web.get("/settings", self.settings_form),
                web.post("/settings", self.settings), web.get("/password", self.password_form),
                web.post("/password", self.password), web.get("/contact", self.contact_form),
                web.post("/contact", self.contact)]

    def nav(self) -> list[tuple[str, str]]:
        if self.current_user:
            return [("/", "Home"), ("/settings", "Settings"), ("/password", "Password"), ("/contact", "Contact us")]
        return [("/", "Home"), ("/signup", "Sign up"), ("/signin", "Sign in"), ("/contact", "Contact us")]

    def header(self) -> str:
        if not self.current_user:
            return ""
        return f"<p>Signed in as {esc(self.current_user)}.</p>" + action_button("/signout", "Sign out")

    def state(self) -> dict[str, Any]:
        return {"users": {name: asdict(user) for name, user in self.users.items()},
                "current_user": self.current_user, "messages": self.messages}

    def _user(self) -> User:
        if self.current_user is None:
            self.redirect("/signin", "Sign in first to see that page.")
        return self.users[self.current_user]

    async def home(self, request: web.Request) -> web.Response:
        if self.current_user:
            user = self.users[self.current_user]
            body = (f"<p>You are signed in as {esc(user.display_name)} ({esc(self.current_user)}). Your settings and "
                    "password are in the navigation above.</p>")
        else:
            body = "<p>Lumen Accounts keeps your profile and preferences. Sign up or sign in from the navigation.</p>"
        return self.page(request, "Welcome to Lumen", body)

    # --- sign-up and sign-in -------------------------------------------------------------------------------

    def _signup_page(self, request: web.Request, values: dict[str, str], errors: dict[str, str],
                     terms: bool = False) -> web.Response:
        fields = (text_input("Username", "username", values.get("username", ""), error=errors.get("username"),
                             hint=USERNAME_RULE)
                  + text_input("Email", "email", values.get("email", ""), kind="email", error=errors.get("email"))
                  + text_input("Password", "password", kind="password", error=errors.get("password"),
                               hint=f"Use {PASSWORD_RULE}")
                  + text_input("Repeat password", "repeat", kind="password", error=errors.get("repeat"))
                  + checkbox("I accept the terms of service", "terms", checked=terms)
                  + (f'<p class="error">{esc(errors["terms"])}</p>' if "terms" in errors else ""))
        body = error_summary(errors) + form("/signup", fields + button("Create account"))
        return self.page(request, "Create an account", body, status=422 if errors else 200)

    async def signup_form(self, request: web.Request) -> web.Response:
        return self._signup_page(request, {}, {})

    async def signup(self, request: web.Request) -> web.Response:
        values = await form_data(request)
        username, email, password = values.get("username", ""), values.get("email", ""), values.get("password", "")
        errors = {}
        if not USERNAME.match(username):
            errors["username"] = f"A username has {USERNAME_RULE}"
        elif username in self.users:
            errors["username"] = f"The username {username} is already taken. Choose another one."
        if not EMAIL.match(email):
            errors["email"] = "Enter a valid email address, like name@example.org."
        elif any(u.email == email for u in self.users.values()):
            errors["email"] = "An account with this email address already exists."
        if problem := _password_problem(password):
            errors["password"] = problem
        elif values.get("repeat", "") != password:
            errors["repeat"] = "The two passwords do not match."
        if values.get("terms") != "on":
            errors["terms"] = "Accept the terms of service to create an account."
        if errors:
            return self._signup_page(request, values, errors, values.get("terms") == "on")
        self.users[username] = User(email, password, username)
        self.current_user = username
        self.redirect("/settings", f"Welcome, {username}! Your account has been created.")

    def _signin_page(self, request: web.Request, username: str = "", error: str | None = None) -> web.Response:
        fields = (text_input("Username", "username", username)
                  + text_input("Password", "password", kind="password", error=error))
        body = error_summary({"password": error} if error else {}) + form("/signin", fields + button("Sign in"))
        return self.page(request, "Sign in", body, status=422 if error else 200)

    async def signin_form(self, request: web.Request) -> web.Response:
        return self._signin_page(request)

    async def signin(self, request: web.Request) -> web.Response:
        values = await form_data(request)
        user = self.users.get(values.get("username", ""))
        if user is None or user.password != values.get("password", ""):
            return self._signin_page(request, values.get("username", ""), "Wrong username or password.")
        self.current_user = values["username"]
        self.redirect("/", f"Signed in as {self.current_user}.")

    async def signout(self, request: web.Request) -> web.Response:
        self.current_user = None
        self.redirect("/", "You have signed out.")

    # --- settings and password -----------------------------------------------------------------------------

    def _settings_page(self, request: web.Request, values: dict[str, Any], errors: dict[str, str]) -> web.Response:
        fields = (text_input("Display name", "display_name", values["display_name"], error=errors.get("display_name"))
                  + text_input("Email", "email", values["email"], kind="email", error=errors.get("email"))
                  + select("Language", "language", LANGUAGES, values["language"])
                  + select("Time zone", "timezone", TIMEZONES, values["timezone"])
                  + checkboxes("Email notifications", "notifications", NOTIFICATIONS, values["notifications"])
                  + radios("Theme", "theme", THEMES, values["theme"]))
        body = error_summary(errors) + form("/settings", fields + button("Save settings"))
        return self.page(request, "Settings", body, status=422 if errors else 200)

    async def settings_form(self, request: web.Request) -> web.Response:
        return self._settings_page(request, asdict(self._user()), {})

    async def settings(self, request: web.Request) -> web.Response:
        user = self._user()
        values: dict[str, Any] = asdict(user) | await form_data(request)
        values["notifications"] = sorted(set(await form_list(request, "notifications")) & dict(NOTIFICATIONS).keys())
        errors = {}
        if not 1 <= len(values["display_name"]) <= 40:
            errors["display_name"] = "A display name has 1 to 40 characters."
        email = values["email"]
        if not EMAIL.match(email):
            errors["email"] = "Enter a valid email address, like name@example.org."
        elif any(u.email == email and u is not user for u in self.users.values()):
            errors["email"] = "Another account uses this email address."
        for key, options in (("language", LANGUAGES), ("timezone", TIMEZONES), ("theme", THEMES)):
            if values[key] not in dict(options):
                values[key] = getattr(user, key)
                errors[key] = f"Choose a {key.replace('timezone', 'time zone')} from the list."
        if errors:
            return self._settings_page(request, values, errors)
        for key in ("display_name", "email", "language", "timezone", "notifications", "theme"):
            setattr(user, key, values[key])
        self.redirect("/settings", "Your settings have been saved.")

    def _password_page(self, request: web.Request, errors: dict[str, str]) -> web.Response:
        fields = (text_input("Current password", "current", kind="password", error=errors.get("current"))
                  + text_input("New password", "new", kind="password", error=errors.get("new"),
                               hint=f"Use {PASSWORD_RULE}")
                  + text_input("Repeat new password", "repeat", kind="password", error=errors.get("repeat")))
        body = error_summary(errors) + form("/password", fields + button("Change password"))
        return self.page(request, "Change your password", body, status=422 if errors else 200)

    async def password_form(self, request: web.Request) -> web.Response:
        self._user()
        return self._password_page(request, {})

    async def password(self, request: web.Request) -> web.Response:
        user = self._user()
        values = await form_data(request)
        new = values.get("new", "")
        errors = {}
        if values.get("current", "") != user.password:
            errors["current"] = "The current password is wrong."
        if problem := _password_problem(new):
            errors["new"] = problem
        elif new == user.password:
            errors["new"] = "The new password must differ from the current one."
        elif values.get("repeat", "") != new:
            errors["repeat"] = "The two new passwords do not match."
        if errors:
            return self._password_page(request, errors)
        user.password = new
        self.redirect("/settings", "Your password has been changed.")

    # --- contact -------------------------------------------------------------------------------------------

    def _contact_page(self, request: web.Request, values: dict[str, str], errors: dict[str, str]) -> web.Response:
        fields = (text_input("Your name", "name", values.get("name", ""), error=errors.get("name"))
                  + text_input("Email", "email", values.get("email", ""), kind="email", error=errors.get("email"))
                  + select("Topic", "topic", TOPICS, values.get("topic", ""), error=errors.get("topic"))
                  + textarea("Message", "message", values.get("message", ""), error=errors.get("message"))
                  + checkbox("Send me a copy", "copy", checked=values.get("copy") == "on"))
        body = (error_summary(errors) + "<p>We answer within two working days.</p>"
                + form("/contact", fields + button("Send message")))
        return self.page(request, "Contact us", body, status=422 if errors else 200)

    async def contact_form(self, request: web.Request) -> web.Response:
        user = self.users.get(self.current_user or "")
        values = {"name": user.display_name, "email": user.email} if user else {}
        return self._contact_page(request, values, {})

    async def contact(self, request: web.Request) -> web.Response:
        values = await form_data(request)
        errors = {}
        if not values.get("name"):
            errors["name"] = "Enter your name."
        if not EMAIL.match(values.get("email", "")):
            errors["email"] = "Enter a valid email address, like name@example.org."
        if values.get("topic") not in dict(TOPICS[1:]):
            errors["topic"] = "Choose a topic."
        if len(values.get("message", "")) < 10:
            errors["message"] = "Write a message of at least 10 characters."
        if errors:
            return self._contact_page(request, values, errors)
        self.messages.append({key: values[key] for key in ("name", "email", "topic", "message")}
                             | {"copy": values.get("copy") == "on", "user": self.current_user})
        self.redirect("/contact", "Thank you: your message has been sent.")
