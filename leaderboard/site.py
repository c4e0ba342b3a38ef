"""The static leaderboard site (`polar leaderboard build`): plain HTML and one stylesheet, no network.

    index.html                      rankings per env and suite, a harness x model matrix for each, and the harness x
                                    family matrix (`polar.harnesses.matrix`)
    style.css
    submissions/<name>/index.html   one submission: its manifest, summary, per-task and per-episode results
    submissions/<name>/episodes/    every episode's page and their index (`polar.evaluation.viewer`)
    submissions/<name>/{traces.jsonl, manifest.json, summary.json, results.parquet}   copied as submitted

Every submission is checked (`validate.check`) before it is shown; re-grading is `polar leaderboard validate`'s.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from polar.evaluation.stats import INTERVALS, wilson_interval
from polar.evaluation.viewer import page_name, write_pages
from polar.leaderboard.submission import FILES, SubmissionError, opened
from polar.leaderboard.validate import Checked, check, label

HERE = Path(__file__).parent
SUBMISSIONS = HERE / "submissions"
"""The submissions that ship with the repository (`leaderboard/submissions/<name>/`)."""
LOCAL_SUBMISSIONS = Path("submissions")
"""Where `polar leaderboard submit` puts a submission by default, relative to the working directory; `build` reads
it beside `SUBMISSIONS`."""


@dataclass
class Entry:
    checked: Checked
    lines: dict[str, int]
    """Each episode's line in traces.jsonl."""

    @property
    def name(self) -> str:
        return self.checked.manifest.name

    @property
    def pass1(self) -> float:
        return self.checked.summary.get("pass@1") or 0.0

    def rank_key(self) -> tuple:
        """Higher pass@1 first, then higher mean reward, then the earlier submission, then the name."""
        summary = self.checked.summary
        return (-(summary.get("pass@1") or 0.0), -(summary.get("mean_reward") or 0.0),
                self.checked.manifest.date.isoformat(), self.name)


def build(submissions: Path | Sequence[Path], out: Path) -> list[Entry]:
    """Check every submission in the `submissions` folder or folders (directories and .tar.gz) and write the site
    to `out`."""
    folders = [Path(submissions)] if isinstance(submissions, str | Path) else [Path(f) for f in submissions]
    paths = sorted((p for folder in folders for p in folder.iterdir()
                    if p.is_dir() or p.name.endswith((".tar.gz", ".tgz"))), key=lambda p: p.name)
    if not paths:
        raise SubmissionError(f"{', '.join(map(str, folders))}: no submissions (directories or .tar.gz files) to "
                              "build from")
    out = Path(out)
    (out / "submissions").mkdir(parents=True, exist_ok=True)
    entries: dict[str, Entry] = {}
    for path in paths:
        with opened(path) as directory:
            try:
                checked = check(directory)
            except SubmissionError as e:
                raise SubmissionError(f"{path}: {e}") from None
            if checked.manifest.name in entries:
                raise SubmissionError(f"{path}: the name {checked.manifest.name!r} is taken by another submission")
            target = out / "submissions" / checked.manifest.name
            target.mkdir(exist_ok=True)
            for file in FILES:
                shutil.copyfile(directory / file, target / file)
            with (directory / "traces.jsonl").open(encoding="utf-8") as f:
                lines = {_episode_id(line): n for n, line in enumerate(f, 1) if line.strip()}
        entry = Entry(checked, lines)
        entries[entry.name] = entry
        write_pages(checked.episodes.values(), target / "episodes", title=f"episodes of {entry.name}",
                    up=("../index.html", entry.name))
        (target / "index.html").write_text(submission_page(entry))
    shutil.copyfile(HERE / "site.css", out / "style.css")
    ranked = sorted(entries.values(), key=Entry.rank_key)
    (out / "index.html").write_text(index_page(ranked))
    return ranked


def index_page(entries: list[Entry]) -> str:
    boards: dict[tuple, list[Entry]] = defaultdict(list)
    for entry in entries:
        m = entry.checked.manifest
        boards[(m.env_id, m.suite, m.suite_hash, len(m.tasks))].append(entry)
    sections = []
    for (env_id, suite, digest, tasks), board in sorted(boards.items()):
        sections.append(f"""<section class="board">
<h2>{escape(env_id)} &middot; suite {escape(suite)}</h2>
<p class="meta">{tasks} task(s) &middot; suite hash <code>{escape(digest)}</code> &middot; {len(board)} submission(s)
&middot; ranked by pass@1, then mean reward</p>
{ranking_table(board)}
<h3>Harness &times; model (best pass@1)</h3>
{matrix_table(board)}
</section>""")
    header = f"""<h1>polar-gym leaderboard</h1>
<p>{len(entries)} submission(s). Every number below is recomputed from the submitted traces, and every episode's
artefact is re-graded by <code>polar leaderboard validate</code>. {INTERVALS}.</p>
<div class="controls"><input id="filter" type="search" placeholder="Filter rows: harness, model, policy, name..."
aria-label="Filter rows"><span id="shown"></span></div>"""
    sections.append(f"""<section class="board">
<h2>Harness &times; family</h2>
<p class="meta">Which harness runs which env family in which sandbox, at its pinned version: each cell is a proof test
(oracle 1, "done" 0, the real binary, offline) computed from the adapters (<code>polar.harnesses.matrix</code>).</p>
{harness_family_table()}
</section>""")
    return page("polar-gym leaderboard", header, "\n".join(sections), root="")


def harness_family_table() -> str:
    from polar.harnesses.matrix import FAMILIES, rows  # the registry imports every adapter: only when a site is built

    head = "<tr><th>harness</th><th>version</th>" + "".join(f"<th>{escape(f)}</th>" for f in FAMILIES) + "</tr>"
    body = ["<tr>" + f"<th>{escape(name)}</th><td>{escape(version)}</td>" +
            "".join(f'<td{" class=empty" if cell == "—" else ""}>{escape(cell)}</td>' for cell in cells) + "</tr>"
            for name, version, *cells in rows()]
    return _table("matrix harness-family", head, body)


def ranking_table(board: list[Entry]) -> str:
    rows = []
    rank, previous = 0, None
    for position, entry in enumerate(board, 1):
        m, s = entry.checked.manifest, entry.checked.summary
        score = (entry.pass1, s.get("mean_reward"))
        rank, previous = (rank if score == previous else position), score  # ties share a rank
        low, high = wilson_interval(entry.pass1, len(m.tasks))
        link = f"submissions/{escape(m.name)}/"
        rows.append(f"""<tr>
<td class="num" data-value="{rank}">{rank}</td>
<td><a href="{link}index.html">{escape(m.name)}</a></td>
<td>{escape(m.harness.name)} <span class="ci">{escape(m.harness.version or "")}</span></td>
<td>{escape(m.model or "—")}</td>
<td>{escape(m.policy.name)}</td>
<td class="num score" data-value="{entry.pass1}"><span class="bar" style="--p:{entry.pass1 * 100:.1f}%"></span>\
{entry.pass1:.3f}</td>
<td class="num ci" data-value="{low}">{low:.2f}&ndash;{high:.2f}</td>
<td class="num" data-value="{s.get("mean_reward") or 0}">{s.get("mean_reward") or 0:.3f}</td>
<td class="num">{m.k}</td>
<td>{m.date.isoformat()}</td>
<td><a href="{link}traces.jsonl">traces.jsonl</a></td>
</tr>""")
    head = ("<tr><th class=num data-type=num>#</th><th>Submission</th><th>Harness</th><th>Model</th><th>Policy</th>"
            "<th class=num data-type=num>pass@1</th><th class=num data-type=num>95% CI</th>"
            "<th class=num data-type=num>Mean reward</th><th class=num data-type=num>k</th><th>Date</th>"
            "<th>Traces</th></tr>")
    return _table("ranking sortable filterable", head, rows)


def model_label(entry: Entry) -> str:
    m = entry.checked.manifest
    return m.model or f"({m.policy.name} policy)"


def matrix_table(board: list[Entry]) -> str:
    harnesses = sorted({e.checked.manifest.harness.name for e in board})
    models = sorted({model_label(e) for e in board})
    best: dict[tuple[str, str], Entry] = {}
    for entry in board:  # ranked already: the first one of a cell is its best
        best.setdefault((entry.checked.manifest.harness.name, model_label(entry)), entry)
    head = "<tr><th>harness \\ model</th>" + "".join(f"<th>{escape(m)}</th>" for m in models) + "</tr>"
    rows = []
    for harness in harnesses:
        cells = []
        for model in models:
            entry = best.get((harness, model))
            cells.append('<td class="empty">·</td>' if entry is None else
                         f'<td><a href="submissions/{escape(entry.name)}/index.html">{entry.pass1:.3f}</a></td>')
        rows.append(f"<tr><th>{escape(harness)}</th>{''.join(cells)}</tr>")
    return _table("matrix", head, rows)


def submission_page(entry: Entry) -> str:
    c = entry.checked
    m, s = c.manifest, c.summary
    low, high = wilson_interval(entry.pass1, len(m.tasks))
    settings = ", ".join(f"{k}={v}" for k, v in m.policy.settings.items())
    facts = {
        "env": f"{m.env_id} (version {m.env_version})",
        "suite": f"{m.suite} ({len(m.tasks)} tasks, hash {m.suite_hash})",
        "harness": f"{m.harness.name} {m.harness.version or ''}",
        "model": m.model or "—",
        "policy": f"{m.policy.name}: max_turns={m.policy.max_turns}, "
                  f"time_limit_s={m.policy.time_limit_s or 'per task'}" + (f", {settings}" if settings else ""),
        "sandbox": m.sandbox, "k, seed": f"{m.k}, {m.seed}", "date": m.date.isoformat(),
        "polar-gym": m.polar_version,
        **{key: f"{value:.3f}" for key, value in s.items() if key.startswith("pass@") and value is not None},
        "pass@1 95% CI": f"{low:.2f}–{high:.2f} (Wilson, n = {len(m.tasks)} tasks)",
        "mean reward": f"{s.get('mean_reward') or 0:.3f} (components as scored (raw): "
                       + ", ".join(f"{k} {v:.3f} ({s.get('components', {}).get(k, 0.0):.3f})"
                                   for k, v in s.get("components_scored", {}).items()) + ")",
        "mean turns, tokens": f"{s.get('mean_turns') or 0:.1f}, {s.get('tokens', 0)}",
        "statuses": ", ".join(f"{k} {v}" for k, v in s.get("status_counts", {}).items() if v),
    }
    dl = "\n".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in facts.items())
    files = " &middot; ".join(f'<a href="{f}">{f}</a>' for f in ("traces.jsonl", "manifest.json", "summary.json",
                                                                  "results.parquet"))
    files += ' &middot; <a href="episodes/index.html">every episode, turn by turn</a>'
    header = f"""<p><a href="../../index.html">&larr; leaderboard</a></p>
<h1>{escape(m.name)}</h1>
<p>{escape(m.harness.name)} &middot; {escape(m.model or m.policy.name)} &middot; {escape(m.env_id)} \
{escape(m.suite)}</p>
<div class="controls"><input id="filter" type="search" placeholder="Filter rows: task, status..."
aria-label="Filter rows"><span id="shown"></span></div>"""
    body = f"""<dl class="facts">{dl}</dl>
<p>Files: {files}</p>
<h2>Per task</h2>
{task_table(entry)}
<h2>Episodes</h2>
{episode_table(entry)}"""
    return page(f"{m.name} — polar-gym leaderboard", header, body, root="../../")


def task_table(entry: Entry) -> str:
    c = entry.checked
    outcome = next(x.name for x in c.family.reward.components if x.kind == "outcome")
    rows = []
    for task_id in c.manifest.tasks:
        samples = [c.episodes[(task_id, i)] for i in range(c.manifest.k)]
        solved = sum(t.solved(outcome) for t in samples)
        mean = sum(t.reward for t in samples) / len(samples)
        cells = " ".join(f'<a href="episodes/{page_name(t.episode_id)}" '
                         f'class="{"pass" if t.reward >= 1.0 else "fail"}">{t.reward:.2f}</a>' for t in samples)
        rows.append(f"<tr><td>{escape(task_id)}</td><td>{escape(str(getattr(c.tasks[task_id], 'difficulty', '')))}"
                    f'</td><td class="num" data-value="{solved / len(samples)}">{solved}/{len(samples)}</td>'
                    f'<td class="num">{mean:.3f}</td><td>{cells}</td></tr>')
    head = ("<tr><th>Task</th><th>Difficulty</th><th class=num data-type=num>Solved</th>"
            "<th class=num data-type=num>Mean reward</th><th>Rewards by sample</th></tr>")
    return _table("sortable filterable", head, rows)


def episode_table(entry: Entry) -> str:
    rows = []
    for key, t in sorted(entry.checked.episodes.items()):
        components = ", ".join(f"{k} {v:.2f}" for k, v in t.reward_components.items())
        log = t.verifier_log[-3000:] + (f"\nerror: {t.error}" if t.error else "")
        rows.append(f"""<tr id="ep-{escape(t.episode_id)}"><td>{escape(key[0])}</td><td class="num">{key[1]}</td>
<td class="status-{t.status}">{t.status}</td><td class="num">{t.reward:.3f}</td><td>{escape(components)}</td>
<td class="num">{len(t.turns)}</td><td class="num">{sum(len(x.reply.token_ids or ()) for x in t.turns)}</td>
<td class="num">{entry.lines.get(t.episode_id, "")}</td>
<td><a href="episodes/{page_name(t.episode_id)}">page</a>
<details><summary class="mono">{escape(t.episode_id[:8])}</summary><p>{escape(label(key, t))}, seed {t.seed}</p>
<pre>{escape(log)}</pre></details></td></tr>""")
    head = ("<tr><th>Task</th><th class=num data-type=num>Sample</th><th>Status</th>"
            "<th class=num data-type=num>Reward</th><th>Components</th><th class=num data-type=num>Turns</th>"
            "<th class=num data-type=num>Tokens</th><th class=num data-type=num>Line</th><th>Episode</th></tr>")
    return _table("sortable filterable", head, rows)


def page(title: str, header: str, body: str, root: str) -> str:
    script = (HERE / "site.js").read_text()
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<link rel="stylesheet" href="{root}style.css">
</head>
<body>
<header>
{header}
</header>
<main>
{body}
</main>
<footer>Built by <code>polar leaderboard build</code> from the submissions' own traces.</footer>
<script>
{script}</script>
</body>
</html>
"""


def _table(classes: str, head: str, rows: list[str]) -> str:
    return f'<table class="{classes}">\n<thead>{head}</thead>\n<tbody>\n{"".join(rows)}\n</tbody>\n</table>'


def _episode_id(line: str) -> str:
    return json.loads(line).get("episode_id", "")
