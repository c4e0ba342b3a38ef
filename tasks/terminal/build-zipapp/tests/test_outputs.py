"""The archive runs from elsewhere, without the sources, as python3 ARCHIVE and as ./ARCHIVE."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

TEXT = "the cat and the hat\nsat on the mat\n"


def run_elsewhere(direct: bool):
    tmp = Path(tempfile.mkdtemp())
    shutil.copy("/app/dist/wordstat.pyz", tmp / "ws.pyz")
    (tmp / "in.txt").write_text(TEXT)
    argv = [str(tmp / "ws.pyz")] if direct else ["python3", str(tmp / "ws.pyz")]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return subprocess.run([*argv, "in.txt"], cwd=tmp, capture_output=True, text=True, env=env, timeout=30)


def test_runs_with_python():
    out = run_elsewhere(False)
    assert out.stdout.strip() == "lines=2 words=9 common=the", out


def test_runs_directly():
    assert os.access("/app/dist/wordstat.pyz", os.X_OK)
    assert Path("/app/dist/wordstat.pyz").read_bytes().startswith(b"#!")
    out = run_elsewhere(True)
    assert out.stdout.strip() == "lines=2 words=9 common=the", out


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
