"""The report on the task's data and on a second file with other edge cases."""

import subprocess
import tempfile
from pathlib import Path


def report(path):
    done = subprocess.run(["python3", "/app/report.py", str(path)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_task_data():
    assert report("/app/events.csv") == ["li 3 7.5", "maria 3 7.5", "sam 2 -", "zoe 2 7.0"]


def test_other_data():
    path = Path(tempfile.mkdtemp()) / "more.csv"
    path.write_text("user,kind,score\nbo,quiz,3\nal,login,\nbo,exam,4\nal,quiz,5\n")
    assert report(path) == ["al 2 5.0", "bo 2 3.5"]


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
