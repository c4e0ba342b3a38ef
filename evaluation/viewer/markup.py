"""What every viewer page is made of: escaping, folded text, embedded data, and the page shell.

Agent output is hostile, so there are exactly two ways text from a trace reaches a page: `esc` (HTML-escaped into
markup) and `data_script` (JSON with `<`, `>` and `&` escaped, read by the page's script, which only ever sets
`textContent`). The shell also carries a Content-Security-Policy that lets only the page's own script run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
FOLD_CHARS = 1500
"""Text longer than this (or than FOLD_LINES lines) is folded: present in the page, shown on a click."""
FOLD_LINES = 30


def esc(value: Any) -> str:
    """`value` as text that is safe inside HTML markup and inside a quoted attribute."""
    return html.escape(str(value), quote=True)


def size(text: str) -> str:
    """A human size for a text: `812 B`, `14.2 kB`, `1.3 MB`."""
    n = len(text.encode("utf-8", errors="replace"))
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} kB" if n < 1_000_000 else f"{n / 1_000_000:.1f} MB"


def block(text: str, cls: str = "", label: str = "", scale: int = 1) -> str:
    """Preformatted text, folded behind a one-line summary when it is long (`scale` times the usual limits, for
    what a reader comes to read, such as a file); never cut."""
    pre = f'<pre class="{esc(cls)}">{esc(text)}</pre>'
    lines = text.count("\n") + 1
    if len(text) <= FOLD_CHARS * scale and lines <= FOLD_LINES * scale:
        return pre
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")[:100]
    what = f"{esc(label)} " if label else ""
    return (f'<details class="fold"><summary>{what}<span class="first">{esc(first)}</span> '
            f'<span class="size">{size(text)}, {lines} lines</span></summary>{pre}</details>')


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


_UNSAFE_IN_SCRIPT = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def data_script(element_id: str, value: Any) -> str:
    """`value` as JSON inside a non-executed script element: no `</script>` or comment can appear in it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    text = re.sub("[<>&\u2028\u2029]", lambda m: _UNSAFE_IN_SCRIPT[m.group()], text)
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'


@cache
def _asset(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def page(title: str, body: str, data: str = "") -> str:
    """A whole self-contained page: inline style and script, nothing fetched, only its own script allowed."""
    script = _asset("viewer.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}</title>
<style>
{_asset("viewer.css")}</style>
</head>
<body>
{body}
{data}
<script>{script}</script>
</body>
</html>
"""
