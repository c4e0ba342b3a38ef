"""`polar eval` for every family in both sandboxes, as a user runs it: eval → summary → report → leaderboard submit
→ validate (every episode re-graded from its artefact and replayed from its replies; the run with its replies
emptied is rejected); and a task that cannot start is one `sandbox_error` episode, with its reason, while the run
goes on."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.leaderboard_runs import edit_traces, suite_of

from polar.trace import read_jsonl

CASES = {
    "polar/Code-v0": ("code-mini", "caesar_cipher"),
    "polar/SWE-v0": ("swe-mini", "jpvanhal__inflection-0.5.1-01"),
    "polar/Terminal-v0": ("terminal-mini", "csv-group-totals"),
    "polar/Web-v0": ("web-mini", "shop-towels-to-cart"),
}


def polar(*argv: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "polar.cli", *argv], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("sandbox", ["local", "docker"])
@pytest.mark.parametrize("env_id", sorted(CASES))
def test_eval_report_submit_validate(request, bwrap, env_id, sandbox, tmp_path):
    request.getfixturevalue("docker") if sandbox == "docker" else None
    if env_id == "polar/Web-v0":
        request.getfixturevalue("chromium")
    suite, task = CASES[env_id]
    run = tmp_path / "run"
    one_task = suite_of(env_id, suite, (task,), tmp_path / "suite")  # a submission covers its whole suite
    done = polar("eval", env_id, "--policy", "oracle", "--suite", str(one_task), "--sandbox", sandbox,
                 "--out", str(run))
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["pass@1"] == 1.0, summary
    (trace,) = read_jsonl(run / "traces.jsonl")
    assert (trace.status, trace.reward, trace.sandbox) == ("completed", 1.0, sandbox)
    report = polar("report", str(run), "--out", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr[-2000:]
    assert env_id in (tmp_path / "report.html").read_text()
    sub = tmp_path / "sub"
    submitted = polar("leaderboard", "submit", str(run), "--out", str(sub), "--name", f"oracle-{sandbox}")
    assert submitted.returncode == 0, submitted.stderr[-2000:]
    validated = polar("leaderboard", "validate", str(sub))
    assert validated.returncode == 0 and validated.stdout.startswith("OK "), validated.stdout + validated.stderr
    assert "1 episodes re-graded, replayed)" in validated.stdout, validated.stdout

    # the same run with every reply emptied: its artefact still earns 1, but no recorded turn wrote it
    edit_traces(run, lambda traces: [{**t, "turns": [{**turn, "reply": {"content": ""}} for turn in t["turns"]]}
                                     for t in traces])
    forged = tmp_path / "forged"
    submitted = polar("leaderboard", "submit", str(run), "--out", str(forged), "--name", f"forged-{sandbox}")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    validated = polar("leaderboard", "validate", str(forged))
    assert validated.returncode == 1 and "replaying disagrees with 1 episode(s)" in validated.stdout, \
        validated.stdout + validated.stderr
    assert "the harness asked for" in validated.stdout, validated.stdout  # an empty reply does not end the episode


def test_a_task_that_cannot_start_is_a_sandbox_error_episode_and_the_run_goes_on(bwrap, tmp_path):
    """A docker-only task in the local sandbox beside one that runs: both are episodes, the summary counts both."""
    suite = tmp_path / "suite"
    for name, extra in (("runs-here", ""), ("needs-docker", "RUN npm install -g left-pad\n")):
        for rel, text in {"instruction.md": "Create the file done.\n", "task.toml": 'version = "1.0"\n',
                          "environment/Dockerfile": f"FROM polar/base:bookworm\nWORKDIR /app\n{extra}",
                          "solution/solve.sh": "#!/bin/bash\ntouch /app/done\n",
                          "tests/test.sh": "#!/bin/bash\n[ -f /app/done ] && echo 1 > /logs/verifier/reward.txt "
                                           "|| echo 0 > /logs/verifier/reward.txt\n"}.items():
            (suite / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (suite / name / rel).write_text(text)
    run = tmp_path / "run"
    done = polar("eval", "polar/Terminal-v0", "--policy", "oracle", "--suite", str(suite), "--out", str(run))
    assert done.returncode == 0, done.stderr[-3000:]
    traces = {t.task_id: t for t in read_jsonl(run / "traces.jsonl")}
    assert (traces["runs-here"].status, traces["runs-here"].reward) == ("completed", 1.0)
    broken = traces["needs-docker"]
    assert (broken.status, broken.reward) == ("sandbox_error", 0.0)
    assert "the task could not start" in broken.error and "docker sandbox only" in broken.error
    summary = json.loads((run / "summary.json").read_text())
    assert summary["episodes"] == 2 and summary["pass@1"] == 0.5, summary


def test_the_web_oracle_fits_the_default_turn_budget(bwrap, chromium, tmp_path):
    """`polar run polar/Web-v0 --policy oracle --episodes 3` with its defaults: no episode is truncated (the longest
    bundled reference solution takes 17 browser actions; the default budget is the env's own)."""
    done = polar("run", "polar/Web-v0", "--policy", "oracle", "--episodes", "3", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    traces = list(read_jsonl(tmp_path / "traces.jsonl"))
    assert [(t.status, t.reward) for t in traces] == [("completed", 1.0)] * 3
