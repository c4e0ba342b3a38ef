"""The first failing commit, found by running check.sh over a fresh build of the same history."""

import subprocess
import tempfile
from pathlib import Path


def git(*args, cwd="/app/repo"):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def first_bad():
    ref = Path(tempfile.mkdtemp()) / "repo"
    subprocess.run(["bash", "/tests/make_repo.sh", str(ref)], check=True, capture_output=True)
    for commit in git("rev-list", "--reverse", "main", cwd=ref).split():
        git("checkout", "-q", commit, cwd=ref)
        if subprocess.run(["bash", "check.sh"], cwd=ref, capture_output=True).returncode != 0:
            return commit
    raise AssertionError("check.sh never fails in the reference history")


def test_first_bad_commit():
    assert Path("/app/first_bad.txt").read_text().strip() == first_bad()


def test_back_on_main_and_clean():
    assert git("symbolic-ref", "--short", "HEAD") == "main"
    assert git("status", "--porcelain") == ""
    assert not Path("/app/repo/.git/BISECT_LOG").exists()


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
