"""main must keep the original history (rebuilt here from the same script) and have the timeout undone."""

import subprocess
import tempfile
from pathlib import Path

REPO = "/app/repo"


def git(*args, cwd=REPO):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def original_history():
    ref = Path(tempfile.mkdtemp()) / "repo"
    subprocess.run(["bash", "/tests/make_repo.sh", str(ref)], check=True, capture_output=True)
    return ref, git("rev-list", "main", cwd=ref).split()


def test_history_kept_and_extended():
    _, original = original_history()
    history = git("rev-list", "main").split()
    assert set(original) <= set(history), "commits of main were rewritten or dropped"
    assert history[0] != original[0], "no new commit on main"


def test_timeout_restored_and_later_changes_kept():
    ref, _ = original_history()
    config = Path(REPO, "config.ini").read_text()
    assert "timeout = 30" in config and "retries = 3" in config, config
    assert git("show", "main:config.ini").count("timeout = 30") == 1
    for name in ("README.md", "app.py"):
        assert git("show", f"main:{name}") == git("show", f"main:{name}", cwd=ref), name


def test_clean_tree_on_main():
    assert git("status", "--porcelain") == ""
    assert git("symbolic-ref", "--short", "HEAD") == "main"


if __name__ == "__main__":
    import sys

    failed = 0
    for name, check in list(globals().items()):
        if name.startswith("test_") and callable(check):
            try:
                check()
                print("PASS", name)
            except Exception as e:  # noqa: BLE001 - every failure is reported, then the verdict
                failed += 1
                print("FAIL", name, repr(e))
    sys.exit(1 if failed else 0)
