"""render.sh from several directories, directly and through a symlink."""

import os
import subprocess
import tempfile
from pathlib import Path

EXPECTED = "Hello Ada, welcome to Polar Station!\n"


def render(script, cwd):
    return subprocess.run([script, "Ada"], cwd=cwd, capture_output=True, text=True, timeout=10).stdout


def test_from_anywhere():
    for cwd in ("/", "/tmp", "/app/tools", "/app/data"):
        assert render("/app/tools/render.sh", cwd) == EXPECTED, cwd


def test_through_a_symlink():
    link_dir = Path(tempfile.mkdtemp())
    os.symlink("/app/tools/render.sh", link_dir / "render")
    assert render(str(link_dir / "render"), "/") == EXPECTED


def test_files_in_place():
    assert Path("/app/tools/templates/greeting.tmpl").is_file() and Path("/app/data/site.txt").is_file()


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
