"""The final artefact of an episode, drawn by its shape: what each family records as re-gradable.

    {"patch": diff}                          SWE-v0: the patch, as a coloured diff
    {"files": {name: text}}                  Code-v0: the task's files as the agent left them
    {"state": {...}, "url": ...}             Web-v0: the web app's final server-side state and the page it was on
    {"changes": [...], "deleted", "ended"}   Terminal-v0: what changed in the sandbox since setup
    {"too_large": {...}}                     Terminal-v0: changes too large to keep

Keys of no known shape are shown as JSON, so nothing an artefact holds is left out.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from polar.evaluation.viewer.markup import block, esc, pretty_json

DIFF_FOLD_LINES = 600
"""A diff longer than this is folded (still whole in the page)."""
FILE_HEADERS = ("diff --git", "--- ", "+++ ", "index ", "new file", "deleted file", "rename ", "similarity")


def diff(patch: str) -> str:
    """A unified diff with its file headers, hunks, additions and deletions coloured."""
    lines = patch.splitlines()
    out = []
    for line in lines:
        if line.startswith(FILE_HEADERS):
            cls = "file"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        else:
            cls = "ctx"
        out.append(f'<span class="{cls}">{esc(line)}</span>')
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++ "))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("--- "))
    files = sum(1 for x in lines if x.startswith("diff --git")) or sum(1 for x in lines if x.startswith("+++ "))
    summary = f"{files} file(s), +{added} −{removed}"
    pre = f'<pre class="diff">{"".join(out)}</pre>'  # each line a block: no newline between them
    if len(lines) > DIFF_FOLD_LINES:
        return f'<details class="fold"><summary>patch: {summary}</summary>{pre}</details>'
    return f'<p class="meta">patch: {summary}</p>{pre}'


def _files(files: dict[str, Any]) -> str:
    parts = []
    for name, text in sorted(files.items()):
        text = text if isinstance(text, str) else pretty_json(text)
        parts.append(f'<div class="file"><div class="name">{esc(name)}</div>{block(text, "code", name, scale=8)}</div>')
    return "".join(parts) or '<p class="meta">no files</p>'


def _decoded(content: Any) -> tuple[str | None, int]:
    """The text of a base64 file content (None when it is binary), and its size in bytes."""
    try:
        raw = base64.b64decode(str(content), validate=True)
    except (binascii.Error, ValueError):
        return str(content), len(str(content))
    try:
        return raw.decode("utf-8"), len(raw)
    except UnicodeDecodeError:
        return None, len(raw)


def _changes(artefact: dict[str, Any]) -> str:
    rows = []
    for item in artefact.get("changes") or []:
        if not isinstance(item, dict):
            rows.append(f'<tr><td colspan="3">{block(pretty_json(item))}</td></tr>')
            continue
        kind = item.get("type")
        mode = item.get("mode")
        what = f"{kind} {oct(mode)[2:] if isinstance(mode, int) else ''}"
        if kind == "symlink":
            detail = f"→ <code>{esc(item.get('target'))}</code>"
        elif "content" in item:
            text, length = _decoded(item["content"])
            shown = block(text, "code", item.get("path", ""), scale=8) if text is not None else None
            detail = shown or f"{length} bytes (binary)"
        else:
            detail = ""
        rows.append(f"<tr><td><code>{esc(item.get('path'))}</code></td><td>{esc(what)}</td><td>{detail}</td></tr>")
    deleted = "".join(f"<li><code>{esc(p)}</code></li>" for p in artefact.get("deleted") or [])
    ended = "".join(f"<li>{esc(e.get('pid') if isinstance(e, dict) else e)}: <code>"
                    f"{esc(' '.join(map(str, e.get('args') or [])) if isinstance(e, dict) else '')}</code></li>"
                    for e in artefact.get("ended") or [])
    return (f'<table class="changes"><thead><tr><th>path</th><th>type, mode</th><th>content</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>'
            + (f"<h4>deleted</h4><ul>{deleted}</ul>" if deleted else "")
            + (f"<h4>processes of the task's services that ended</h4><ul>{ended}</ul>" if ended else ""))


def artefact_html(artefact: dict[str, Any] | None) -> str:
    """The artefact section's body."""
    if not artefact:
        return '<p class="meta">this episode recorded no artefact</p>'
    rest = dict(artefact)
    parts = []
    if isinstance(rest.get("patch"), str):
        parts.append(diff(rest.pop("patch")) if artefact["patch"] else '<p class="meta">the patch is empty</p>')
    if isinstance(rest.get("files"), dict):
        parts.append(_files(rest.pop("files")))
    if "state" in rest:
        url = rest.pop("url", None)
        parts.append(f'<p class="meta">the app\'s final state; the page was <code>{esc(url)}</code></p>'
                     + block(pretty_json(rest.pop("state")), "json", "state"))
    if isinstance(rest.get("changes"), list):
        parts.append(_changes(rest))
        for key in ("changes", "deleted", "ended"):
            rest.pop(key, None)
    if isinstance(rest.get("too_large"), dict):
        large = rest.pop("too_large")
        parts.append(f'<p class="warn">the changes held {esc(large.get("bytes"))} bytes, past the '
                     f'{esc(large.get("cap"))} an artefact keeps: not recorded, cannot be re-graded</p>')
    if rest:
        parts.append(block(pretty_json(rest), "json", "other fields"))
    return "".join(parts)
