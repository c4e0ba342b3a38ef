"""The build has no sources and runs from a copy, from another directory."""

import shutil
import subprocess
import tempfile
from pathlib import Path

EXPECTED = "circle: area=7.069\nsquare: area=4.000\n"


def test_no_sources():
    files = [p for p in Path("/app/build").rglob("*") if p.is_file()]
    assert files and not [p for p in files if p.suffix == ".py"], files
    assert Path("/app/build/main.pyc").is_file()


def test_runs_without_the_sources():
    copy = Path(tempfile.mkdtemp()) / "build"
    shutil.copytree("/app/build", copy)
    out = subprocess.run(["python3", str(copy / "main.pyc")], cwd="/tmp", capture_output=True, text=True)
    assert out.stdout == EXPECTED, out


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
