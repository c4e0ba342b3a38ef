"""`polar report`: a self-contained HTML page built from two real eval runs, and a clear error for a non-run."""

import argparse
import math
import re

import pandas as pd
import pytest

from polar.cli import main
from polar.errors import PolarError
from polar.evaluation.report import add_parser, build_report
from polar.evaluation.stats import bootstrap_pass_at_k, wilson_interval

TASKS = "run_length_encoding,roman_numerals"


@pytest.fixture(scope="module")
def runs(bwrap, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for policy in ("oracle", "empty"):
        argv = ["eval", "polar/Code-v0", "--suite", "code-mini", "--tasks", TASKS, "--policy", policy, "-k", "2",
                "-j", "4", "--max-turns", "2", "--out", str(root / policy)]
        assert main(argv) == 0
    return root / "oracle", root / "empty"


def test_report_is_self_contained_and_compares_both_runs(runs, tmp_path):
    out = build_report(list(runs), tmp_path / "sub" / "report.html")
    page = out.read_text(encoding="utf-8")
    for external in ('src="http', "src='http", 'href="http', "<link", "<script", "@import", "url("):
        assert external not in page
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,[A-Za-z0-9+/=]+"', page)) == 3
    assert "<th>oracle</th>" in page and "<th>empty</th>" in page
    assert "<td>1.000 [0.342, 1.000]</td>" in page  # oracle: 2/2 tasks pass, Wilson 95% interval over tasks
    assert "<td>0.000 [0.000, 0.658]</td>" in page  # empty: 0/2
    assert "pass@2 1.000" in page and "pass@2 0.000" in page
    assert "1.00 (2/2) · 1.000" in page and "0.00 (0/2) · 0.000" in page  # per task
    assert "run_length_encoding" in page and "roman_numerals" in page


def test_text_from_runs_is_escaped(runs, tmp_path):
    oracle, _ = runs
    results = pd.read_parquet(oracle / "results.parquet")
    results["task_id"] = results["task_id"].where(results["task_id"] != "roman_numerals", "<b>x</b>&")
    copy = tmp_path / "oracle"
    copy.mkdir()
    for name in ("run.json", "summary.json"):
        (copy / name).write_text((oracle / name).read_text())
    results.to_parquet(copy / "results.parquet", index=False)
    page = build_report([copy], tmp_path / "report.html").read_text()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;&amp;" in page


def test_a_directory_that_is_not_an_eval_run_is_named_with_the_missing_file(runs, tmp_path):
    oracle, _ = runs
    not_a_run = tmp_path / "traces-only"
    not_a_run.mkdir()
    (not_a_run / "run.json").write_text((oracle / "run.json").read_text())
    with pytest.raises(PolarError, match=r"traces-only is not an eval run: summary\.json is missing"):
        build_report([oracle, not_a_run], tmp_path / "report.html")
    with pytest.raises(PolarError, match="nowhere is not a directory"):
        build_report([tmp_path / "nowhere"], tmp_path / "report.html")
    assert not (tmp_path / "report.html").exists()


def test_the_report_subcommand_parses_and_writes(runs, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report", *map(str, runs), "--out", str(tmp_path / "r.html")])
    assert args.fn(args) == 0 and (tmp_path / "r.html").exists()
    assert str(tmp_path / "r.html") in capsys.readouterr().out


def test_wilson_interval():
    assert wilson_interval(0.0, 0) == (0.0, 1.0)  # nothing observed, nothing excluded
    low, high = wilson_interval(0.5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    assert wilson_interval(1.0, 10)[1] == 1.0 and wilson_interval(0.0, 10)[0] == 0.0
    assert wilson_interval(1.0, 5)[0] == pytest.approx(0.566, abs=1e-3)  # 5 tasks all solved


def test_bootstrap_pass_at_k_with_no_task_of_k_samples_is_unknown():
    mean, low, high = bootstrap_pass_at_k([(1, 1), (1, 0)], k=2)
    assert math.isnan(mean) and (low, high) == (0.0, 1.0)


def test_the_paired_gain_credits_shared_tasks_and_refuses_unpaired_runs():
    """Every task up by a quarter is a sure gain although the two runs' own spreads overlap; no change is no gain;
    runs over different task lists are refused, not silently truncated."""
    from polar.evaluation.stats import paired_gain

    before = [0.0, 0.25, 0.5, 0.75] * 5
    gain, low, high = paired_gain(before, [b + 0.25 for b in before])
    assert (round(gain, 6), round(low, 6), round(high, 6)) == (0.25, 0.25, 0.25)
    gain, low, high = paired_gain(before, [0.75, 0.5, 0.25, 0.0] * 5)  # the same rates, on other tasks
    assert low < 0 < high and abs(gain) < 1e-9
    with pytest.raises(ValueError, match="same tasks"):
        paired_gain([0.5], [0.5, 1.0])
