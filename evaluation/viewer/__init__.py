"""The episode viewer: a self-contained HTML page per episode of any traces, and an index that filters them.

    DIR/index.html         every episode: task, status, reward, turns; filters by status, reward and task
    DIR/ep-<episode>.html  one episode turn by turn, its verifier log, its artefact, its token chains

Behind `polar view TRACES`, the episode links of `polar report`, and the leaderboard site's drill-down. Nothing
is fetched: each page carries its style and its script. Modules: `markup` (escaping, folding, the shell),
`episode` (the episode page), `artefact` (the artefact by shape), `tokens` (the token view), `index`.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import webbrowser
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from polar.evaluation.viewer.episode import episode_page
from polar.evaluation.viewer.index import index_page
from polar.trace import Trace

__all__ = ["episode_page", "index_page", "load_tokenizer", "open_in_browser", "page_name", "write_pages"]

_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,79}")


def page_name(episode_id: str) -> str:
    """The file name of an episode's page; an id that is not a plain name (a hostile `../x`) is hashed."""
    safe = episode_id if _SAFE.fullmatch(episode_id) else hashlib.sha256(episode_id.encode()).hexdigest()[:20]
    return f"ep-{safe}.html"


def write_pages(traces: Iterable[Trace], out: Path, *, title: str = "polar episodes", tokenizer: Any | None = None,
                up: tuple[str, str] | None = None) -> Path:
    """Write each episode's page and the index into `out`; return the index's path. `up`: (href, text) of a
    link above the index (back to a report or a leaderboard page)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    traces = list(traces)
    names: list[str] = []
    taken: set[str] = set()
    for trace in traces:
        name = page_name(trace.episode_id)
        n = 1
        while name in taken:  # the same episode id twice in one file: keep both
            n += 1
            name = f"{page_name(trace.episode_id)[:-5]}-{n}.html"
        taken.add(name)
        names.append(name)
        (out / name).write_text(episode_page(trace, tokenizer), encoding="utf-8")
    index = out / "index.html"
    index.write_text(index_page(traces, names, title, up), encoding="utf-8")
    return index


def load_tokenizer(name: str) -> Any:
    """A tokenizer to show token text: `local` (the embedded SmolLM2's) or a local Hugging Face folder."""
    if name == "local":
        from polar.policies.local_policy import load_model

        return load_model().tokenizer
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name, local_files_only=True)


def open_in_browser(path: Path) -> bool:
    """Open a page in the user's browser when there is a display to show it on (never a text browser in a
    terminal session); returns whether it did."""
    if sys.platform not in ("darwin", "win32") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        return webbrowser.open(Path(path).resolve().as_uri())
    except webbrowser.Error:
        return False
