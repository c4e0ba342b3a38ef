"""The leaderboard end to end: real eval runs are packed, validated (re-graded in real sandboxes) and built into
a site; each kind of tampering is rejected, with the reason."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from support import REPO
from support.leaderboard_runs import TASKS, edit_traces, leaderboard, polar_eval, rehash, rejected

from polar.leaderboard.submission import DATA_FILES, sha256
from polar.tasks.code import load_suite


@pytest.fixture(scope="module")
def runs(bwrap, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    return {policy: polar_eval(root / policy, policy) for policy in ("oracle", "empty")}


@pytest.fixture(scope="module")
def packed(runs, tmp_path_factory) -> Path:
    """A valid submission of the oracle run; tests copy it before tampering."""
    out = tmp_path_factory.mktemp("packed") / "oracle"
    assert leaderboard("submit", str(runs["oracle"]), "--out", str(out), "--name", "oracle-builtin") == 0
    return out


@pytest.fixture
def sub(packed, tmp_path) -> Path:
    return Path(shutil.copytree(packed, tmp_path / "sub"))


def test_submit_validate_build(runs, packed, tmp_path, capsys):
    manifest = json.loads((packed / "manifest.json").read_text())
    assert sorted(p.name for p in packed.iterdir()) == ["manifest.json", *DATA_FILES]
    assert manifest["schema"] == "polar.submission/v1" and manifest["name"] == "oracle-builtin"
    assert manifest["tasks"] == list(TASKS) and manifest["k"] == 2
    assert Path(manifest["suite"]).name == "code-two"
    assert manifest["suite_hash"] == json.loads((runs["oracle"] / "run.json").read_text())["suite_hash"]
    assert manifest["harness"]["name"] == "builtin" and manifest["harness"]["version"]
    assert manifest["files"]["traces.jsonl"] == sha256(packed / "traces.jsonl")
    capsys.readouterr()

    assert leaderboard("validate", str(packed)) == 0
    ok = capsys.readouterr().out.strip()
    assert ok.startswith("OK oracle-builtin:") and "4 episodes re-graded" in ok and "pass@1 1.000" in ok

    tarball = tmp_path / "empty.tar.gz"
    assert leaderboard("submit", str(runs["empty"]), "--out", str(tarball), "--setting", "note=baseline") == 0
    capsys.readouterr()
    assert leaderboard("validate", str(tarball)) == 0
    assert "pass@1 0.000" in capsys.readouterr().out

    submissions = tmp_path / "submissions"
    submissions.mkdir()
    shutil.copytree(packed, submissions / "oracle-builtin")
    shutil.copy(tarball, submissions)
    site = tmp_path / "site"
    assert leaderboard("build", "--submissions", str(submissions), "--out", str(site)) == 0
    index = (site / "index.html").read_text()
    assert index.index("oracle-builtin") < index.index(">empty<"), "ranked by pass@1"
    assert "http://" not in index and "https://" not in index
    for name in ("oracle-builtin", "empty"):
        page = (site / "submissions" / name / "index.html").read_text()
        assert all(task in page for task in TASKS)
        assert (site / "submissions" / name / "traces.jsonl").read_bytes()
        assert f'href="submissions/{name}/traces.jsonl"' in index


def test_submit_refuses_an_incomplete_run(runs, tmp_path, capsys):
    run = Path(shutil.copytree(runs["oracle"], tmp_path / "run"))
    lines = (run / "traces.jsonl").read_text().splitlines(keepends=True)
    (run / "traces.jsonl").write_text("".join(lines[1:]))
    assert leaderboard("submit", str(run), "--out", str(tmp_path / "sub")) == 2
    assert "incomplete: 3 of 4 episodes; missing" in capsys.readouterr().err
    assert not (tmp_path / "sub").exists()


def test_a_run_of_part_of_a_suite_is_refused(tmp_path, bwrap, capsys):
    """`polar eval --tasks` is for looking; a submission measures the whole suite it names."""
    done = subprocess.run([sys.executable, "-m", "polar.cli", "eval", "polar/Code-v0", "--policy", "oracle", "--suite",
                           "code-mini", "--tasks", "caesar_cipher", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert leaderboard("submit", str(tmp_path / "run"), "--out", str(tmp_path / "sub")) == 2
    err = capsys.readouterr().err
    assert "the run covers 1 of the 5 tasks of suite 'code-mini' (it leaves out balanced_brackets" in err, err
    assert "rerun `polar eval` without --tasks" in err and not (tmp_path / "sub").exists()


def test_a_submission_cut_down_to_its_solved_task_is_rejected(sub, capsys):
    """The traces and manifest of one task of the two, re-signed: pass@1 1.000 'on the suite' from half of it."""
    edit_traces(sub, lambda traces: [t for t in traces if t["task_id"] == "caesar_cipher"])
    manifest = json.loads((sub / "manifest.json").read_text())
    (sub / "manifest.json").write_text(json.dumps({**manifest, "tasks": ["caesar_cipher"]}))
    rehash(sub)
    assert "the run covers 1 of the 2 tasks of suite" in rejected(sub, capsys)


def test_an_edited_reward_in_results_is_rejected(sub, capsys):
    results = pd.read_parquet(sub / "results.parquet")
    results.loc[(results.task_id == "caesar_cipher") & (results["sample"] == 1), "reward"] = 0.5
    results.to_parquet(sub / "results.parquet", index=False)
    rehash(sub)
    out = rejected(sub, capsys)
    assert "results.parquet: episode caesar_cipher#1 field reward is 0.5, the traces give 1.0" in out


def test_a_missing_episode_is_rejected(sub, capsys):
    edit_traces(sub, lambda traces: [t for t in traces if not (t["task_id"] == "balanced_brackets" and
                                                                t["seed"] == _seed("balanced_brackets", 1))])
    rehash(sub)
    assert "incomplete: 3 of 4 episodes; missing balanced_brackets#1" in rejected(sub, capsys)


def test_a_best_of_k_relabelled_as_k_1_is_rejected(sub, capsys):
    """Each task's second sample, its seed rewritten to the first's, in a manifest that says k=1: the episode id
    a seed fixes gives it away."""
    def relabel(traces):
        kept = [t for t in traces if t["seed"] == _seed(t["task_id"], 1)]
        for t in kept:
            t["seed"] = _seed(t["task_id"], 0)
        return kept

    edit_traces(sub, relabel)
    manifest = json.loads((sub / "manifest.json").read_text())
    (sub / "manifest.json").write_text(json.dumps({**manifest, "k": 1}))
    rehash(sub)
    out = rejected(sub, capsys)
    assert "but a reset with that seed is episode" in out and "played with another seed" in out


def test_a_file_hash_mismatch_is_rejected(sub, capsys):
    summary = json.loads((sub / "summary.json").read_text())
    summary["pass@1"] = 1.0
    (sub / "summary.json").write_text(json.dumps(summary, indent=1))
    out = rejected(sub, capsys)
    assert "summary.json: sha256 is" in out and "manifest.json says" in out


def test_a_trace_that_does_not_validate_is_rejected(sub, capsys):
    def break_status(traces):
        traces[2]["status"] = "solved-honestly"
        return traces

    edit_traces(sub, break_status)
    rehash(sub)
    out = rejected(sub, capsys)
    assert "traces.jsonl:3 (episode" in out and "not a valid polar.trace/v1 trace: at status" in out


def test_a_regrade_mismatch_is_rejected(sub, capsys):
    """The artefact goes back to the stub while every recorded number still says solved: only re-grading sees it."""
    stub = {t.id: t.stub for t in load_suite("code-mini")}

    def unsolve(traces):
        for t in traces:
            if t["task_id"] == "caesar_cipher":
                t["artefact"] = {"files": stub["caesar_cipher"]}
        return traces

    edit_traces(sub, unsolve)
    rehash(sub)
    assert leaderboard("validate", str(sub)) == 1  # nothing but the re-grade is wrong ...
    out = capsys.readouterr().out
    assert "re-grading disagrees with 2 episode(s)" in out
    assert "(caesar_cipher#0): re-graded reward 0 (solved=0" in out and "recorded 1 (solved=1" in out
    from polar.leaderboard.validate import check

    assert check(sub).manifest.name == "oracle-builtin"  # ... every other check passes


FORGING_CAESAR = """
import json

_dumps = json.dumps


def _all_passed(obj, *args, **kwargs):  # the old in-process runner reported its verdict through json.dumps
    if isinstance(obj, dict) and "failed" in obj:
        obj = {"passed": list(obj["passed"]) + list(obj["failed"]), "failed": {}}
    return _dumps(obj, *args, **kwargs)


json.dumps = _all_passed


class _Same(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


def encrypt(text, shift):
    return _Same(text)


def decrypt(text, shift):
    return _Same(text)


def find_shift(plain, cipher):
    return _Same("0")
"""


def test_a_submission_from_a_forging_module_is_rejected_by_re_grading(sub, capsys):
    """The red team's kind of artefact (a module that forges the runner's verdict and returns always-equal values),
    submitted with the rewards of a solved run: re-grading in a fresh sandbox gives 0 and names the episodes."""
    def forge(traces):
        for t in traces:
            if t["task_id"] == "caesar_cipher":
                t["artefact"] = {"files": {"caesar.py": FORGING_CAESAR}}
        return traces

    edit_traces(sub, forge)
    rehash(sub)
    assert leaderboard("validate", str(sub)) == 1
    out = capsys.readouterr().out
    assert "re-grading disagrees with 2 episode(s)" in out and "(caesar_cipher#0): re-graded reward 0" in out


def resubmitted(run: Path, where: Path, edit, capsys) -> Path:
    """A copy of `run` with its traces edited, every number recomputed with polar's own functions and packed by
    `submit`: a forger's submission, which only re-grading and replay can tell from a real one."""
    from polar.evaluation.evaluate import EvalRun, EvalSettings, write_outputs

    run = Path(shutil.copytree(run, where / "run"))
    edit_traces(run, edit)
    recorded = json.loads((run / "run.json").read_text())
    write_outputs(EvalRun.open(run, EvalSettings(**{**recorded, "tasks": tuple(recorded["tasks"])})), "solved")
    assert leaderboard("submit", str(run), "--out", str(where / "sub")) == 0
    capsys.readouterr()
    return where / "sub"


def test_an_artefact_no_recorded_turn_wrote_is_rejected_by_replay(runs, tmp_path, capsys):
    """The forgery re-grading alone cannot see: an empty policy's run, each artefact swapped for the reference
    solution, the rewards and every number recomputed. Each artefact earns its reward; the recorded replies, played
    again through the harness and env, do not."""
    solution = {t.id: t.solution for t in load_suite("code-mini")}
    sub = resubmitted(runs["empty"], tmp_path, lambda traces: [
        {**t, "artefact": {"files": solution[t["task_id"]]}, "reward": 1.0, "status": "completed",
         "reward_components": {"solved": 1.0, "tests_passed_frac": 1.0}, "verifier_log": ""} for t in traces], capsys)
    assert leaderboard("validate", "--no-replay", str(sub)) == 0, capsys.readouterr().out  # re-grading passes it
    assert "pass@1 1.000" in capsys.readouterr().out
    out = rejected(sub, capsys)
    assert "replaying disagrees with 4 episode(s)" in out, out
    assert "(caesar_cipher#0): replayed, its 30 recorded replies earn reward 0 (solved=0" in out, out


def test_recorded_turns_the_replay_never_plays_are_rejected(runs, tmp_path, capsys):
    """Turns appended after the harness's last call: the reward still replays, the published turns do not."""
    def pad(traces):
        for t in traces:
            t["turns"] += [{**t["turns"][-1], "index": len(t["turns"]) + i} for i in range(3)]
        return traces

    out = rejected(resubmitted(runs["oracle"], tmp_path, pad, capsys), capsys)
    assert "replaying disagrees with 4 episode(s)" in out and "the trace records 5" in out, out


def test_a_harness_version_other_than_the_installed_one_is_rejected(runs, tmp_path, capsys):
    def relabel(traces):
        return [{**t, "harness": {**t["harness"], "version": "9.9.9"}} for t in traces]

    sub = resubmitted(runs["oracle"], tmp_path, relabel, capsys)
    manifest = json.loads((sub / "manifest.json").read_text())
    assert manifest["harness"]["version"] == "9.9.9"
    out = rejected(sub, capsys)
    assert "recorded through builtin 9.9.9, replayed through builtin " in out, out


def test_a_run_in_the_unisolated_process_sandbox_is_not_replayed_here(sub, capsys):
    """Replaying it would run the submission's commands on the validating machine, which could rewrite the
    submission after its check (or polar itself)."""
    edit_traces(sub, lambda traces: [{**t, "sandbox": "process"} for t in traces])
    manifest = json.loads((sub / "manifest.json").read_text())
    (sub / "manifest.json").write_text(json.dumps({**manifest, "sandbox": "process"}))
    rehash(sub)
    out = rejected(sub, capsys)
    assert "does not isolate what it runs" in out and "--sandbox local" in out, out


def test_a_submission_that_changes_while_it_is_validated_is_rejected(sub, monkeypatch):
    from polar.leaderboard import replay
    from polar.leaderboard.submission import SubmissionError
    from polar.leaderboard.validate import validate

    def rewrite(checked, sandbox, jobs):
        (sub / "summary.json").write_text((sub / "summary.json").read_text().replace("1.0", "1.00"))
        return []

    monkeypatch.setattr(replay, "replay_episodes", rewrite)
    with pytest.raises(SubmissionError, match="changed while it was being validated"):
        validate(sub)


def _seed(task: str, sample: int) -> int:
    from polar.evaluation.evaluate import episode_seed

    return episode_seed(0, task, sample)


BUNDLED = sorted(p for p in (REPO / "leaderboard" / "submissions").iterdir() if p.is_dir())


REPLAYED = ("oracle-builtin", "empty-builtin", "smollm2-builtin", "oracle-claude-code")
"""The baselines whose validation here replays them too: the builtin harness's and one external CLI's. Replaying
all of them took over 14 minutes of a worker (each external harness runs again; 35 s without); they all replayed
when the replay was built, and the harness proof tests run every harness's oracle episodes on today's CLIs."""


@pytest.mark.parametrize("submission", [  # a sweep over every bundled submission: the fast subset validates the first
    pytest.param(p, id=p.name, marks=pytest.mark.slow if p.name != "oracle-builtin" else ()) for p in BUNDLED])
def test_every_bundled_submission_validates_with_todays_graders(bwrap, submission, capsys):
    """The baselines were recorded with earlier graders; re-graded now they must still earn what they claim."""
    replay = [] if submission.name in REPLAYED else ["--no-replay"]
    assert leaderboard("validate", *replay, str(submission)) == 0, capsys.readouterr().out
    assert (", replayed)" in capsys.readouterr().out) == (not replay)
