"""The web apps Web-v0 tasks run against, by the name a task's `app` field gives."""

from __future__ import annotations

from .accounts import Accounts
from .board import Board
from .booking import Booking
from .common import WebApp
from .shop import Shop
from .wiki import Wiki

APPS: dict[str, type[WebApp]] = {"shop": Shop, "accounts": Accounts, "wiki": Wiki, "board": Board,
                                 "booking": Booking}

__all__ = ["APPS", "WebApp"]
