"""The tarball holds exactly the tagged tree under project-1.4.0/, and its checksum file verifies."""

import subprocess
import tarfile
from pathlib import Path

DIST = Path("/app/dist")
EXPECTED = {"README.md": "# project\n", "src/version.py": 'VERSION = "1.4.0"\n',
            "src/tool.py": 'def main():\n    print("tool")\n', "docs/usage.md": "Usage: tool\n"}


def test_tarball_contents():
    with tarfile.open(DIST / "project-1.4.0.tar.gz", "r:gz") as tar:
        files = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
    assert files == {f"project-1.4.0/{k}": v for k, v in EXPECTED.items()}, sorted(files)


def test_checksum_verifies():
    line = (DIST / "project-1.4.0.tar.gz.sha256").read_text()
    assert "project-1.4.0.tar.gz" in line
    done = subprocess.run(["sha256sum", "-c", "project-1.4.0.tar.gz.sha256"], cwd=DIST, capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr


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
