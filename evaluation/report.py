"""`polar report`: one self-contained HTML page comparing eval runs — tables and PNG plots, nothing external.

Each run directory is what `polar eval` wrote: `run.json` (settings), `summary.json` and `results.parquet`
(one row per episode). An episode passes when its env's outcome reward component reaches 1.0, as in
`summary.json`. pass@1 is the share of episodes that pass; pass@k is the unbiased estimator averaged over tasks; their
intervals are defined once, in `polar.evaluation.stats`. Beside the report, `<report stem>-episodes/` holds every
episode's page (`polar.evaluation.viewer`); each per-task cell links to the episodes it counts.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from polar import __version__
from polar.errors import PolarError
from polar.evaluation.curve import CURVE
from polar.evaluation.stats import BOOTSTRAP_RESAMPLES, INTERVALS, bootstrap_pass_at_k, wilson_interval
from polar.trace import solved_by

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

REQUIRED_FILES = ("run.json", "summary.json", "results.parquet")
NUMERIC_COLUMNS = frozenset({"k", "episodes", "mean reward", "mean turns", "tokens", "wall time (episodes summed)"})


@dataclass
class Run:
    """One eval run directory, loaded; `results` has a boolean `passed` column added."""

    path: Path
    label: str
    settings: dict[str, Any]
    summary: dict[str, Any]
    results: pd.DataFrame

    @property
    def agent(self) -> str:
        """Who acted: the policy, and the model behind it when there is one."""
        model = self.settings.get("model")
        return f"{self.settings['policy']} · {model}" if model else str(self.settings["policy"])


def load_run(path: Path, label: str) -> Run:
    """Read one eval run directory; a directory that is not one raises PolarError naming the missing file."""
    import pandas as pd

    if not path.is_dir():
        raise PolarError(f"{path} is not a directory; pass the --out directory of a `polar eval` run")
    for name in REQUIRED_FILES:
        if not (path / name).is_file():
            raise PolarError(f"{path} is not an eval run: {name} is missing (a finished `polar eval` writes "
                             f"{', '.join(REQUIRED_FILES)})")
    settings = json.loads((path / "run.json").read_text())
    summary = json.loads((path / "summary.json").read_text())
    results = pd.read_parquet(path / "results.parquet")
    if results.empty:
        raise PolarError(f"{path}/results.parquet holds no episodes; finish the run (rerun its `polar eval`)")
    column = f"component.{outcome_component(settings['env_id'])}"  # an env unknown here: reward 1.0 passes
    results["passed"] = solved_by(results["reward"], results[column] if column in results else results["reward"])
    return Run(path, label, settings, summary, results)


def outcome_component(env_id: str) -> str | None:
    """The name of the env's outcome reward component, or None for an env this install does not know."""
    from polar.envs.registration import ENVS, env_family

    return env_family(env_id).reward.outcome if env_id in ENVS else None


def pass1_interval(results: pd.DataFrame) -> tuple[float, float]:
    """pass@1's 95% interval for one run's episodes (see `polar.evaluation.stats`)."""
    per_task = results.groupby("task_id")["passed"].mean()
    return wilson_interval(float(per_task.mean()) if len(per_task) else 0.0, len(per_task))


def task_counts(results: pd.DataFrame) -> list[tuple[int, int]]:
    """(samples, passes) per task."""
    counts = results.groupby("task_id")["passed"].agg(["size", "sum"])
    return [(int(n), int(c)) for n, c in counts.itertuples(index=False)]


def run_row(run: Run) -> dict[str, str]:
    """The run table's cells for one run, as display strings."""
    results, settings, k = run.results, run.settings, int(run.settings["k"])
    passed, n = int(results["passed"].sum()), len(results)
    low, high = pass1_interval(results)
    statuses = results["status"].value_counts()
    return {
        "run": run.label, "env": settings["env_id"], "suite": str(settings.get("suite")),
        "harness": settings["harness"], "model / policy": run.agent, "k": str(k),
        "episodes": f"{n}/{run.summary['expected_episodes']}",
        "pass@1 [95% CI]": f"{passed / n:.3f} [{low:.3f}, {high:.3f}]",
        "pass@k [95% CI]": "— (k=1)" if k == 1 else "pass@{} {:.3f} [{:.3f}, {:.3f}]".format(
            k, *bootstrap_pass_at_k(task_counts(results), k)),
        "mean reward": f"{results['reward'].mean():.3f}",
        "components: scored (raw)": components_cell(run),
        "mean turns": f"{results['turns'].mean():.2f}", "tokens": str(int(results["tokens"].sum())),
        "wall time (episodes summed)": "{} ({:.1f} s)".format(
            f"{run.summary['wall_time_s']:.1f} s" if "episode_time_s" in run.summary else "—",  # older runs: a sum
            results["wall_time_s"].sum()),
        "statuses": ", ".join(f"{s} {c}" for s, c in statuses.items()),
    }


def components_cell(run: Run) -> str:
    """Each reward component's mean as scored (weighted and capped by the env's reward spec) and, in brackets,
    its raw mean; raw only for an env this install does not know."""
    from polar.envs.registration import ENVS, env_family

    columns = [c for c in run.results if c.startswith("component.")]
    rows = run.results[columns].fillna(0.0).rename(columns=lambda c: c.removeprefix("component.")).to_dict("records")
    raw = {name: sum(row[name] for row in rows) / len(rows) for name in rows[0]} if rows else {}
    if run.settings["env_id"] not in ENVS:
        return ", ".join(f"{name} (raw {mean:.3f})" for name, mean in raw.items())
    spec = env_family(run.settings["env_id"]).reward
    scored = [spec.contributions(row) for row in rows]
    return ", ".join(f"{c.name} {sum(v[c.name] for v in scored) / len(scored):.3f} (raw {raw.get(c.name, 0.0):.3f})"
                     for c in spec.components)


def _colours(count: int) -> list:
    from matplotlib import colormaps

    return [colormaps["tab10"](i % 10) for i in range(count)]


def _png(fig: Figure) -> str:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _tick_labels(runs: list[Run]) -> list[str]:
    return [f"{r.label}\n{r.settings['harness']} · {r.agent}" for r in runs]


def plot_pass_rates(runs: list[Run]) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(4.0, 1.6 * len(runs)), 3.4))
    ax = fig.add_subplot()
    rates = [r.results["passed"].mean() for r in runs]
    bounds = [pass1_interval(r.results) for r in runs]
    errors = [[rate - lo for rate, (lo, _) in zip(rates, bounds, strict=True)],
              [hi - rate for rate, (_, hi) in zip(rates, bounds, strict=True)]]
    x = range(len(runs))
    ax.bar(x, rates, yerr=errors, capsize=6, color=_colours(len(runs)))
    for i, rate in enumerate(rates):
        ax.annotate(f"{rate:.2f}", (i, rate), xytext=(8, 3), textcoords="offset points", fontsize=8)
    ax.set_xticks(list(x), _tick_labels(runs), fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("pass@1 (95% Wilson CI)")
    return _png(fig)


def plot_rewards(runs: list[Run]) -> str:
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(4.0, 1.6 * len(runs)), 3.4))
    ax = fig.add_subplot()
    rewards = [r.results["reward"].to_numpy() for r in runs]
    ax.boxplot(rewards, positions=range(len(runs)), widths=0.5, showfliers=False)
    rng = np.random.default_rng(0)
    for i, (values, colour) in enumerate(zip(rewards, _colours(len(runs)), strict=True)):
        ax.scatter(i + rng.uniform(-0.15, 0.15, values.size), values, s=14, alpha=0.6, color=colour)
    ax.set_xticks(range(len(runs)), _tick_labels(runs), fontsize=8)
    ax.set_ylabel("episode reward")
    return _png(fig)


def plot_turns_vs_reward(runs: list[Run]) -> str:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MultipleLocator

    fig = Figure(figsize=(6.0, 3.6))
    ax = fig.add_subplot()
    width = 0.6 / len(runs)
    for i, (run, colour) in enumerate(zip(runs, _colours(len(runs)), strict=True)):
        offset = (i - (len(runs) - 1) / 2) * width
        ax.scatter(run.results["turns"] + offset, run.results["reward"], s=16, alpha=0.6, color=colour,
                   label=run.label)
    turns = [t for r in runs for t in r.results["turns"]]
    ax.set_xlim(min(turns) - 0.6, max(turns) + 0.6)
    ax.xaxis.set_major_locator(MultipleLocator(1))
    ax.set_xlabel("turns")
    ax.set_ylabel("episode reward")
    ax.legend(fontsize=8, loc="best")
    return _png(fig)


def per_task_cells(runs: list[Run]) -> tuple[list[str], list[list[tuple[str, float | None]]]]:
    """Task ids, and for each task one (text, pass rate) cell per run: `rate (passed/n) · mean reward`."""
    tasks = sorted({t for r in runs for t in r.results["task_id"]})
    grouped = [r.results.groupby("task_id").agg(n=("passed", "size"), passed=("passed", "sum"),
                                                reward=("reward", "mean")) for r in runs]
    rows = []
    for task in tasks:
        cells: list[tuple[str, float | None]] = []
        for table in grouped:
            if task not in table.index:
                cells.append(("—", None))
                continue
            n, passed, reward = table.loc[task, ["n", "passed", "reward"]]
            cells.append((f"{passed / n:.2f} ({int(passed)}/{int(n)}) · {reward:.3f}", passed / n))
        rows.append(cells)
    return tasks, rows


STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .6em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.meta { color: #555; } .note { color: #555; font-size: 12px; max-width: 900px; }
figure { display: inline-block; margin: .5em 1.5em .5em 0; } figcaption { color: #555; font-size: 12px; }
code { background: #f4f4f4; padding: 0 .2em; }
"""


def _table(header: list[str], rows: list[list[str]], numeric: frozenset[str] = frozenset()) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    num = ' class="num"'
    body = "".join(
        "<tr>" + "".join(f'<td{num if h in numeric else ""}>{html.escape(cell)}</td>'
                         for h, cell in zip(header, row, strict=True)) + "</tr>"
        for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figure(src: str, caption: str) -> str:
    return f'<figure><img alt="{html.escape(caption)}" src="{src}"><figcaption>{html.escape(caption)}</figcaption>' \
           "</figure>"


def render(runs: list[Run], episodes: list[str | None] | None = None) -> str:
    """The whole report as one HTML string; every text that comes from a run is escaped. `episodes`: for each
    run, the address of its episode pages' index (`polar.evaluation.viewer`), or None."""
    e = html.escape
    links = episodes or [None] * len(runs)
    rows = [run_row(r) for r in runs]
    header = list(rows[0])
    sources = "".join(
        f"<li><b>{e(r.label)}</b>: <code>{e(str(r.path))}</code> — sandbox {e(str(r.settings.get('sandbox')))}, "
        f"max_turns {e(str(r.settings.get('max_turns')))}, seed {e(str(r.settings.get('seed')))}, "
        f"suite hash {e(str(r.settings.get('suite_hash')))}, polar {e(str(r.settings.get('polar_version')))}"
        + (f' — <a href="{e(link)}">its episodes</a>' if link else "") + "</li>"
        for r, link in zip(runs, links, strict=True))
    hashes = {(r.settings["env_id"], r.settings.get("suite_hash")) for r in runs}
    mixed = len(hashes) > len({env for env, _ in hashes})
    tasks, cells = per_task_cells(runs)
    task_rows = "".join(
        f"<tr><td>{e(task)}</td>" + "".join(
            f'<td class="num" style="background: hsl({120 * rate:.0f}, 65%, 88%)">'
            + (f'<a href="{e(link)}#task={e(quote(task))}">{e(text)}</a>' if link else e(text)) + "</td>"
            if rate is not None else f"<td>{e(text)}</td>" for (text, rate), link in zip(row, links, strict=True))
        + "</tr>" for task, row in zip(tasks, cells, strict=True))
    task_head = "<th>task</th>" + "".join(f"<th>{e(r.label)}</th>" for r in runs)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>polar eval report: {e(", ".join(r.label for r in runs))}</title>
<style>{STYLE}</style></head><body>
<h1>polar eval report</h1>
<p class="meta">generated {e(datetime.now().astimezone().isoformat(timespec="seconds"))} by polar-gym
{e(__version__)} · {len(runs)} run(s) compared</p>
<ul class="meta">{sources}</ul>
{'<p class="note"><b>Note:</b> runs of the same env measured different task sets (suite hashes differ).</p>'
 if mixed else ''}
<h2>Runs</h2>
{_table(header, [list(r.values()) for r in rows], NUMERIC_COLUMNS)}
<p class="note">An episode passes when the env's outcome reward component reaches 1.0. pass@1 is the share of
episodes that pass; pass@k is the unbiased estimator (Chen et al., 2021) averaged over tasks. {INTERVALS}
({BOOTSTRAP_RESAMPLES} bootstrap resamples, fixed seed). Tokens count the
sampled reply tokens the policy reported. A reward component is shown as scored (its raw value times its
weight, capped, as the env's reward spec adds it to the reward) and raw. Wall time is elapsed time while the run's
episodes ran; in brackets, the episodes' own times summed (larger when episodes ran at once).</p>
<h2>Plots</h2>
{_figure(plot_pass_rates(runs), "pass@1 by run, with 95% Wilson intervals")}
{_figure(plot_rewards(runs), "reward distribution per run: box (quartiles) and every episode")}
{_figure(plot_turns_vs_reward(runs), "turns against reward, one colour per run (each run's points shifted "
         "sideways a little so runs do not hide each other)")}
<h2>Per task</h2>
<p class="note">Each cell: pass rate (passed/episodes) · mean reward, linked to those episodes' pages. — means the run
has no episode of the task.</p>
<table><thead><tr>{task_head}</tr></thead><tbody>{task_rows}</tbody></table>
</body></html>
"""


def _labels(paths: list[Path]) -> list[str]:
    names = [p.resolve().name or str(p) for p in paths]
    return names if len(set(names)) == len(names) else [str(p) for p in paths]


def training_section(paths: list[Path]) -> str:
    """The learning curve and the per-step table of each `polar train grpo` run folder."""
    from polar.evaluation.curve import plot_curve, read_curve

    e, parts = html.escape, []
    for path in paths:
        rows = read_curve(path)
        if not rows:
            raise PolarError(f"{path}/{CURVE} holds no step yet; let its `polar train grpo` run a step")
        table = _table(["step", "mean reward", "pass rate", "spread within groups", "episodes", "tokens", "seconds",
                        "loss", "weights"],
                       [[str(r.step), f"{r.reward:.3f}", f"{r.pass_rate:.3f}", f"{r.group_spread:.3f}",
                         str(r.episodes), str(r.tokens), f"{r.seconds:.1f}",
                         "-" if r.loss is None else f"{r.loss:.4f}", r.weights] for r in rows],
                       frozenset({"step", "mean reward", "pass rate", "episodes", "tokens", "seconds", "loss"}))
        parts.append(f"<h3>{e(path.resolve().name)}</h3><p class=\"meta\"><code>{e(str(path))}</code></p>"
                     + _figure(_png(plot_curve(rows, path.resolve().name)), "mean reward (band: the spread within "
                               "GRPO groups) and pass rate per step") + table)
    return "<h2>Training</h2>" + "".join(parts)


def build_report(run_dirs: list[Path], out: Path) -> Path:
    """Write the HTML report of these run directories to `out`, and return `out`: eval runs compared, and the
    learning curve of each training run (a folder with `curve.jsonl`)."""
    if not run_dirs:
        raise PolarError("no run directories given; pass one or more `polar eval` --out directories")
    paths = [Path(p) for p in run_dirs]
    trained = [p for p in paths if (p / CURVE).is_file() and not (p / "run.json").is_file()]
    evals = [p for p in paths if p not in trained]
    runs = [load_run(p, label) for p, label in zip(evals, _labels(evals), strict=True)]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    page = render(runs, write_episode_pages(runs, out)) if runs else (
        f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>polar training report</title>"
        f"<style>{STYLE}</style></head><body>\n<h1>polar training report</h1>\n</body></html>\n")
    if trained:
        page = page.replace("</body></html>", training_section(trained) + "\n</body></html>")
    out.write_text(page, encoding="utf-8")
    return out


def write_episode_pages(runs: list[Run], report: Path) -> list[str | None]:
    """Each run's episode pages in `<report stem>-episodes/<n>-<label>/`, beside the report; the address of each
    run's index relative to the report (None for a run without traces.jsonl)."""
    from polar.evaluation.viewer import write_pages
    from polar.trace import read_jsonl

    links: list[str | None] = []
    for n, run in enumerate(runs, 1):
        traces = run.path / "traces.jsonl"
        if not traces.is_file():
            links.append(None)
            continue
        folder = f"{report.stem}-episodes/{n}-{re.sub(r'[^A-Za-z0-9._-]+', '_', run.label).strip('._')}"
        write_pages(read_jsonl(traces), report.parent / folder, title=f"episodes of run {run.label}",
                    up=(f"../../{report.name}", "report"))
        links.append(f"{folder}/index.html")
    return links


def cmd_report(args: argparse.Namespace) -> int:
    out = build_report(args.run_dirs, args.out)
    print(f"report: {out}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Register `polar report DIR [DIR ...] [--out report.html]` on the `polar` command's subparsers."""
    report = subparsers.add_parser("report", help="one self-contained HTML page comparing eval runs, with the "
                                                  "learning curves of training runs")
    report.add_argument("run_dirs", nargs="+", type=Path, metavar="DIR",
                        help="`polar eval` output directories and `polar train grpo` run folders")
    report.add_argument("--out", type=Path, default=Path("report.html"), help="the HTML file (default report.html)")
    report.set_defaults(fn=cmd_report)
