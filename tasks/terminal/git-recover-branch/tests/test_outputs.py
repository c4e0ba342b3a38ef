"""experiment must point at its old tip again (rebuilt here with the branch kept); main must not move."""

import subprocess
import tempfile
from pathlib import Path


def git(*args, cwd="/app/repo"):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def reference():
    ref = Path(tempfile.mkdtemp()) / "repo"
    subprocess.run(["bash", "/tests/make_repo.sh", str(ref), "keep"], check=True, capture_output=True)
    return ref


def test_branch_restored_at_old_tip():
    ref = reference()
    assert git("rev-parse", "refs/heads/experiment") == git("rev-parse", "experiment", cwd=ref)


def test_main_unchanged():
    assert git("rev-parse", "main") == git("rev-parse", "main", cwd=reference())


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
