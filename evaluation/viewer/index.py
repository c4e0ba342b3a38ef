"""The index of a set of episode pages: one row per episode, filtered by status, reward and task in the page.

The filters also read the address's fragment (`index.html#task=roman_numerals&status=completed&min=1`), so a
report or a leaderboard links straight to the episodes of one task.
"""

from __future__ import annotations

from collections.abc import Sequence

from polar.evaluation.viewer.markup import esc, page
from polar.trace import Trace


def index_page(traces: Sequence[Trace], names: Sequence[str], title: str, up: tuple[str, str] | None = None) -> str:
    """The list of episodes, each linked to its page `names[i]`; `up` is (href, text) of a link above it."""
    rows = []
    for trace, name in zip(traces, names, strict=True):
        policy = trace.policy.name + (f" · {trace.policy.model}" if trace.policy.model else "") if trace.policy else "—"
        tokens = sum(len(t.reply.token_ids or ()) for t in trace.turns)
        components = ", ".join(f"{k} {v:.2f}" for k, v in trace.reward_components.items())
        rows.append(f"""<tr data-status="{esc(trace.status)}" data-task="{esc(trace.task_id)}" \
data-reward="{trace.reward}"><td><a href="{esc(name)}"><code>{esc(trace.episode_id[:12])}</code></a></td>
<td>{esc(trace.task_id)}</td><td>{esc(trace.env_id)}</td><td>{esc(trace.harness.name)}</td><td>{esc(policy)}</td>
<td class="status-{esc(trace.status)}">{esc(trace.status)}</td><td class="num">{trace.reward:.3f}</td>
<td>{esc(components)}</td><td class="num">{len(trace.turns)}</td><td class="num">{tokens}</td>
<td>{esc(trace.started_at)}</td></tr>""")
    statuses = "".join(f'<option value="{esc(s)}">{esc(s)}</option>' for s in sorted({t.status for t in traces}))
    tasks = "".join(f'<option value="{esc(t)}">{esc(t)}</option>' for t in sorted({t.task_id for t in traces}))
    link = f'<p><a href="{esc(up[0])}">&larr; {esc(up[1])}</a></p>' if up else ""
    body = f"""<header>{link}<h1>{esc(title)}</h1><p class="meta">{len(traces)} episode(s)</p>
<form class="filters" id="filters">
<label>status <select name="status"><option value="">any</option>{statuses}</select></label>
<label>task <select name="task"><option value="">any</option>{tasks}</select></label>
<label>reward from <input name="min" type="number" step="any" size="6"></label>
<label>to <input name="max" type="number" step="any" size="6"></label>
<span id="shown"></span></form></header>
<main><table class="episodes"><thead><tr><th>episode</th><th>task</th><th>env</th><th>harness</th><th>policy</th>
<th>status</th><th class="num">reward</th><th>components</th><th class="num">turns</th><th class="num">tokens</th>
<th>started</th></tr></thead><tbody>
{"".join(rows)}
</tbody></table></main>"""
    return page(title, body)
