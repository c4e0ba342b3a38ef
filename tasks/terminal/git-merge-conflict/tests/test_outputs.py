"""A merge commit of the original tips, with both changes to greet.py and everything else kept."""

import subprocess
import sys
import tempfile
from pathlib import Path

REPO = "/app/repo"


def git(*args, cwd=REPO):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def reference():
    ref = Path(tempfile.mkdtemp()) / "repo"
    subprocess.run(["bash", "/tests/make_repo.sh", str(ref)], check=True, capture_output=True)
    return ref


def test_merge_commit_of_both_tips():
    ref = reference()
    parents = git("rev-list", "--parents", "-n", "1", "main").split()[1:]
    assert parents == [git("rev-parse", "main", cwd=ref), git("rev-parse", "feature/name", cwd=ref)], parents


def test_greet_has_both_changes():
    code = "from greet import greet; print(greet()); print(greet('Ada'))"
    out = subprocess.run([sys.executable, "-B", "-c", code], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines() == ["Hello, world!", "Hello, Ada!"], out
    assert "<<<<<<<" not in Path(REPO, "greet.py").read_text()


def test_other_changes_kept():
    assert "Says hello." in git("show", "main:README.md")
    assert "greet(\"Ada\")" in git("show", "main:test_greet.py")


def test_clean_tree_on_main():
    assert git("status", "--porcelain") == "" and git("symbolic-ref", "--short", "HEAD") == "main"


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
