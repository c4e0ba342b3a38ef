"""Real `polar eval` runs of two Code-v0 tasks and the edits a cheater makes to a submission of one, for the
leaderboard's tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from polar.cli import main
from polar.leaderboard.submission import DATA_FILES, sha256

TASKS = ("balanced_brackets", "caesar_cipher")


def leaderboard(*argv: str) -> int:
    """`polar leaderboard ...` in-process, with `polar`'s own exit codes (2 for a PolarError)."""
    return main(["leaderboard", *argv])


def polar_eval(out: Path, policy: str, k: int = 2) -> Path:
    done = subprocess.run([sys.executable, "-m", "polar.cli", "eval", "polar/Code-v0", "--policy", policy,
                           "--suite", "code-mini", "--tasks", ",".join(TASKS), "-k", str(k), "-j", "2",
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
