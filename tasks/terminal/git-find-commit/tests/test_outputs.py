"""The answer must be the commit that added the key, found in a fresh build of the same history."""

import subprocess
import tempfile
from pathlib import Path


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_answer_is_the_introducing_commit():
    ref = Path(tempfile.mkdtemp()) / "repo"
    subprocess.run(["bash", "/tests/make_repo.sh", str(ref)], check=True, capture_output=True)
    expected = git("log", "--format=%H", "--grep=Fix login on staging", cwd=ref)
    assert len(expected) == 40
    assert Path("/app/answer.txt").read_text().strip() == expected


def test_repository_unchanged():
    assert git("rev-list", "--count", "main", cwd="/app/repo") == "30"
    assert git("status", "--porcelain", cwd="/app/repo") == ""


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
