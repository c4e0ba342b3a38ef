"""training/README.md's per-harness coverage table is the one `benchmarks/coverage_by_harness.py` makes from its results
file, and that file covers every harness under both templates (the benchmark itself is not run here)."""

import importlib
import json

from support import REPO

from polar.harnesses import EXTERNAL

ROOT = REPO


def test_readme_coverage_table_matches_the_results_file(monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    benchmark = importlib.import_module("coverage_by_harness")
    figures = json.loads(benchmark.RESULT.read_text())["figures"]
    assert benchmark.readme_table(figures) in (ROOT / "training" / "README.md").read_text()
    keys = [key.split("/") for key in figures]
    assert {harness for harness, _, _ in keys} == {"builtin", *EXTERNAL}
    for template in benchmark.TEMPLATES:  # the token oracle through every harness under each template
        assert {h for h, t, p in keys if t == template and p == "token-oracle"} == {"builtin", *EXTERNAL}
    for f in figures.values():
        assert f["single_chain"] <= f["episodes"] and 0.0 <= f["merge_coverage"] <= 1.0
        assert sum(f["breaks"].values()) == round(f["chains_per_episode"] * f["episodes"]) - f["episodes"]
