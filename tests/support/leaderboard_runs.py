"""Real `polar eval` runs of two Code-v0 tasks and the edits a cheater makes to a submission of one, for the
leaderboard's tests."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from polar.cli import main
from polar.leaderboard.submission import DATA_FILES, sha256

TASKS = ("balanced_brackets", "caesar_cipher")


def leaderboard(*argv: str) -> int:
    """`polar leaderboard ...` in-process, with `polar`'s own exit codes (2 for a PolarError)."""
    return main(["leaderboard", *argv])


def suite_of(env_id: str, suite: str, tasks: tuple[str, ...], where: Path) -> Path:
    """A suite of only `tasks` of the bundled `suite`, in the family's own format, under `where`: a submission
    covers its whole suite, and the tests' runs stay a task or two long."""
    from polar.tasks import code, harbor, swe, web

    where.mkdir(parents=True, exist_ok=True)
    if env_id in ("polar/Code-v0", "polar/Terminal-v0"):  # a folder of task folders
        bundled = code.BUNDLED if env_id == "polar/Code-v0" else harbor.SUITES[suite]
        for task in tasks:
            if not (where / task).exists():
                shutil.copytree(bundled / task, where / task)
        return where
    if env_id == "polar/SWE-v0":  # instance rows
        rows = [line for line in swe.SUITES[suite].read_text().splitlines()
                if line.strip() and json.loads(line)["instance_id"] in tasks]
        (where / "suite.jsonl").write_text("".join(f"{row}\n" for row in rows))
        return where / "suite.jsonl"
    data = json.loads(web.SUITES[suite].read_text())  # Web-v0: one suite file
    (where / "suite.json").write_text(json.dumps({**data, "tasks": [t for t in data["tasks"] if t["id"] in tasks]}))
    return where / "suite.json"


def polar_eval(out: Path, policy: str, k: int = 2, suite: Path | None = None) -> Path:
    """`polar eval` of Code-v0 on TASKS (a suite folder of them beside `out` unless `suite`)."""
    suite = suite or suite_of("polar/Code-v0", "code-mini", TASKS, out.parent / "code-two")
    done = subprocess.run([sys.executable, "-m", "polar.cli", "eval", "polar/Code-v0", "--policy", policy,
                           "--suite", str(suite), "-k", str(k), "-j", "2",
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def rehash(sub: Path) -> None:
    """Re-sign the manifest after an edit, as a cheater would, so only the deeper checks can catch it."""
    manifest = json.loads((sub / "manifest.json").read_text())
    manifest["files"] = {name: sha256(sub / name) for name in DATA_FILES}
    (sub / "manifest.json").write_text(json.dumps(manifest, indent=2))


def edit_traces(sub: Path, edit) -> None:
    lines = (sub / "traces.jsonl").read_text().splitlines()
    traces = [json.loads(line) for line in lines]
    traces = edit(traces)
    (sub / "traces.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces))


def rejected(sub: Path, capsys) -> str:
    code = leaderboard("validate", str(sub))
    out = capsys.readouterr().out
    assert code == 1, out
    assert out.startswith(f"REJECTED {sub}: ") and out.count("\n") == 1
    return out
