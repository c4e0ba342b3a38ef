"""The leaderboard on Terminal-v0: a real oracle run is packed and validated (every episode re-graded from its artefact
in a fresh sandbox), and a submission whose artefacts do not earn their rewards is rejected, with the reason."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.leaderboard_runs import edit_traces, leaderboard, rehash, rejected, suite_of

TASKS = ("csv-group-totals", "git-revert-commit")
NO_CHANGES = {"changes": [], "deleted": [], "ended": []}
"""A no-op episode's artefact (tests/envs/terminal/test_terminal.py checks that it is exactly this)."""


def polar_eval(out: Path, sandbox: str) -> Path:
    suite = suite_of("polar/Terminal-v0", "terminal-mini", TASKS, out.parent / "terminal-two")
    done = subprocess.run([sys.executable, "-m", "polar.cli", "eval", "polar/Terminal-v0", "--policy", "oracle",
                           "--suite", str(suite), "-j", "2", "--sandbox", sandbox,
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def packed(sandbox: str, root: Path) -> Path:
    out = root / "submission"
    assert leaderboard("submit", str(polar_eval(root / "run", sandbox)), "--out", str(out),
                       "--name", f"oracle-{sandbox}") == 0
    return out


@pytest.fixture(scope="module")
def local(bwrap, tmp_path_factory) -> Path:
    return packed("local", tmp_path_factory.mktemp("local"))


@pytest.fixture(scope="module")
def docker_run(docker, tmp_path_factory) -> Path:
    return packed("docker", tmp_path_factory.mktemp("docker"))


def copy(submission: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(submission, tmp_path / "sub"))


def replace_artefact(sub: Path, task: str, artefact: dict) -> None:
    """Give every episode of `task` this artefact, rewards untouched, and re-sign the manifest as a cheater would."""
    def edit(traces):
        for t in traces:
            if t["task_id"] == task:
                assert t["reward"] == 1.0
                t["artefact"] = artefact
        return traces

    edit_traces(sub, edit)
    rehash(sub)


def file_change(path: str, text: str, mode: int = 0o644) -> dict:
    return {"path": path, "type": "file", "mode": mode, "mtime": 0, "content": base64.b64encode(text.encode()).decode()}


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_an_oracle_run_is_packed_and_validates(request, sandbox, capsys):
    submission = request.getfixturevalue("local" if sandbox == "local" else "docker_run")
    capsys.readouterr()
    assert leaderboard("validate", str(submission)) == 0
    ok = capsys.readouterr().out.strip()
    assert ok.startswith(f"OK oracle-{sandbox}:") and "2 episodes re-graded" in ok and "pass@1 1.000" in ok
    artefacts = [json.loads(line)["artefact"] for line in (submission / "traces.jsonl").read_text().splitlines()]
    assert all(a["changes"] for a in artefacts)


def test_a_solved_episode_with_a_no_op_s_artefact_is_rejected(local, tmp_path, capsys):
    sub = copy(local, tmp_path)
    replace_artefact(sub, "csv-group-totals", NO_CHANGES)
    out = rejected(sub, capsys)
    assert "re-grading disagrees with 1 episode(s)" in out
    assert "(csv-group-totals#0): re-graded reward 0 (reward=0), recorded 1 (reward=1)" in out


def test_an_artefact_with_a_pre_written_reward_file_is_rejected(local, tmp_path, capsys):
    sub = copy(local, tmp_path)
    replace_artefact(sub, "csv-group-totals", {**NO_CHANGES, "changes": [
        file_change("/logs/verifier/reward.txt", "1\n"), file_change("/logs/verifier/reward.json", '{"reward": 1}')]})
    assert "(csv-group-totals#0): re-graded reward 0" in rejected(sub, capsys)


def test_an_artefact_replacing_python3_is_rejected_as_tampering(docker_run, tmp_path, capsys):
    """The solved episode's own artefact plus a python3 that makes every check pass: re-grading names the tampering."""
    sub = copy(docker_run, tmp_path)
    trace = next(json.loads(line) for line in (sub / "traces.jsonl").read_text().splitlines()
                 if json.loads(line)["task_id"] == "csv-group-totals")
    fake = file_change("/usr/bin/python3.11", "#!/bin/sh\nexit 0\n", 0o755)
    replace_artefact(sub, "csv-group-totals", {**trace["artefact"], "changes": [
        c for c in trace["artefact"]["changes"] if c["path"] != "/app/totals.csv"] + [fake]})
    out = rejected(sub, capsys)
    assert "(csv-group-totals#0): re-grading found tampering (changed /usr/bin/python3.11" in out
    assert "yet its reward is 1" in out


@pytest.mark.parametrize("artefact, reason", [
    ({**NO_CHANGES, "changes": [file_change("/usr/bin/python3", "#!/bin/sh\nexit 0\n", 0o755)]},
     "cannot be applied in a fresh sandbox"),  # the local sandbox's system is the host's, read-only
    ({**NO_CHANGES, "changes": [file_change("/app/../usr/bin/python3", "#!/bin/sh\nexit 0\n", 0o755)]},
     "is not an absolute, normalised path"),
    ({"too_large": {"bytes": 17 << 20, "cap": 16 << 20}}, "re-grading could not grade it"),
])
def test_an_artefact_that_cannot_be_re_graded_is_rejected(local, tmp_path, capsys, artefact, reason):
    sub = copy(local, tmp_path)
    replace_artefact(sub, "git-revert-commit", artefact)
    out = rejected(sub, capsys)
    assert "(git-revert-commit#0)" in out and reason in out
