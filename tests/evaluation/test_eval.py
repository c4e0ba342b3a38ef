"""`polar eval`: results, pass@k, resume after SIGKILL, refusing to mix settings, failing fast."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from polar.cli import main
from polar.evaluation.evaluate import episode_seed
from polar.evaluation.stats import pass_at_k

TASKS = "run_length_encoding,roman_numerals,caesar_cipher"


def polar_eval(out, *extra):
    return main(["eval", "polar/Code-v0", "--suite", "code-mini", "--tasks", TASKS, "--out", str(out), *extra])


def test_pass_at_k_is_the_unbiased_estimator():
    assert pass_at_k(10, 0, 1) == 0.0 and pass_at_k(10, 10, 5) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - 3 / 6)


def test_eval_writes_results_summary_and_traces(bwrap, tmp_path, capsys):
    assert polar_eval(tmp_path, "--policy", "oracle", "-k", "2", "-j", "3") == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == summary["expected_episodes"] == 6
    assert summary["pass@1"] == summary["pass@2"] == 1.0 and summary["mean_reward"] == 1.0
    assert summary["status_counts"]["completed"] == 6
    results = pd.read_parquet(tmp_path / "results.parquet")
    assert len(results) == 6 and set(results.task_id) == set(TASKS.split(","))
    assert {"component.solved", "component.tests_passed_frac", "wall_time_s", "turns"} <= set(results.columns)
    assert all(results.seed == [episode_seed(0, t, s) for t, s in zip(results.task_id, results["sample"], strict=True)])
    out = capsys.readouterr().out
    assert "pass@1" in out and "polar report" in out


def test_resume_refuses_other_settings_and_names_the_difference(bwrap, tmp_path, capsys):
    assert polar_eval(tmp_path, "--policy", "empty", "--max-turns", "1") == 0
    assert polar_eval(tmp_path, "--policy", "empty", "--max-turns", "2") == 2
    assert "max_turns=1" in capsys.readouterr().err


def test_a_run_killed_with_sigkill_resumes_without_losing_or_changing_anything(bwrap, tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["```bash\nsleep 0.4\n```"] * 3 + ["submit"]))
    argv = [sys.executable, "-m", "polar.cli", "eval", "polar/Code-v0", "--suite", "code-mini", "--policy",
            "scripted", "--replies", str(replies), "-k", "2", "-j", "1"]
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    proc = subprocess.Popen([*argv, "--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        traces = killed / "traces.jsonl"
        if traces.exists() and len(traces.read_text().splitlines()) >= 2:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished_before = len((killed / "traces.jsonl").read_text().splitlines())
    assert 2 <= finished_before < 10
    assert subprocess.run([*argv, "--out", str(killed)], capture_output=True).returncode == 0
    assert subprocess.run([*argv, "--out", str(clean)], capture_output=True).returncode == 0

    def comparable(path):
        summary = json.loads((path / "summary.json").read_text())
        return {k: v for k, v in summary.items() if k not in ("wall_time_s", "episode_time_s", "mean_episode_s")}

    assert comparable(killed) == comparable(clean)
    ids = [json.loads(line)["episode_id"] for line in (killed / "traces.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 10


def test_a_policy_endpoint_that_is_down_fails_fast_with_its_url(tmp_path, capsys):
    started = time.monotonic()
    code = polar_eval(tmp_path, "--policy", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1")
    assert code == 2 and time.monotonic() - started < 15
    assert "http://127.0.0.1:9/v1" in capsys.readouterr().err
    assert not (tmp_path / "run.json").exists()


def test_the_suite_hash_covers_task_files_and_not_where_they_lie(tmp_path):
    """Terminal tasks hold paths and bytes: the hash is of their content, so a copy elsewhere hashes the same and
    an edited test does not."""
    import shutil

    from polar.evaluation.evaluate import suite_hash
    from polar.tasks.harbor import load_suite

    original = load_suite("terminal-mini")
    shutil.copytree(original[0].path.parent, tmp_path / "suite")
    assert suite_hash(load_suite(str(tmp_path / "suite"))) == suite_hash(original)
    test_sh = tmp_path / "suite" / original[0].id / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text() + "\necho edited\n")
    assert suite_hash(load_suite(str(tmp_path / "suite"))) != suite_hash(original)


def test_an_optional_task_field_left_unset_leaves_the_suite_hash_as_it_was(tmp_path):
    """Code-v0 gained test_timeout_s after the bundled submissions were made: a suite that does not set it hashes as
    before (the submissions still validate), and one that sets it hashes differently (a run names what it ran)."""
    import dataclasses

    from polar.evaluation.evaluate import suite_hash
    from polar.tasks.code import load_suite

    tasks = load_suite("code-mini")
    manifest = json.loads((Path(__file__).parents[2] / "leaderboard" / "submissions" / "oracle-builtin"
                           / "manifest.json").read_text())  # hashed before the field existed
    assert manifest["suite"] == "code-mini"
    assert suite_hash(tasks) == manifest["suite_hash"]
    timed = [dataclasses.replace(tasks[0], test_timeout_s=5.0), *tasks[1:]]
    assert suite_hash(timed) != suite_hash(tasks)
