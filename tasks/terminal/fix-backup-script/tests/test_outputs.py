"""Backs up a fresh tree with awkward names, then checks the failure cases."""

import os
import subprocess
import tarfile
import tempfile
from pathlib import Path

FILES = {"docs/q1 report.txt": "q1\n", "plain.txt": "plain\n", "docs/old notes/a b c.md": "deep\n",
         "with  two spaces/x.txt": "x\n", "-dash.txt": "dash\n"}


def backup(*args):
    return subprocess.run(["bash", "/app/backup.sh", *args], capture_output=True, text=True, timeout=30)


def test_all_files_archived():
    src = Path(tempfile.mkdtemp()) / "my data"
    for rel, text in FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    done = backup(str(src), "check one")
    assert done.returncode == 0, done
    assert done.stdout.strip() == "/app/backups/check one.tar.gz"
    with tarfile.open("/app/backups/check one.tar.gz") as tar:
        got = {os.path.normpath(m.name): tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
    assert got == FILES, got


def test_missing_source_fails():
    done = backup("/app/no such dir", "nothing")
    assert done.returncode != 0 and done.stdout.strip() == "", done
    assert not Path("/app/backups/nothing.tar.gz").exists()


def test_unwritable_archive_fails():
    done = backup("/app/data", "missing-folder/x")
    assert done.returncode != 0 and done.stdout.strip() == "", done


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
