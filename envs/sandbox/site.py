"""A folder of Python packages pip-installed on the host for a sandbox's Python, to mount read-only.

What a task's own environment pip-installs (an SWE repository's test dependencies, a Harbor Dockerfile's `RUN pip
install`) where the sandbox cannot install it itself: the local sandbox runs on the host's read-only system with no
network. The host's pip resolves wheels for the sandbox's Python (`--python-version`, binary wheels only) into a
`--target` folder, whose console scripts are made to run on whatever `python3` the sandbox has.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from polar.errors import SandboxError


def install_site(requirements: tuple[str, ...], python_version: str, site: Path, what: str) -> None:
    """pip-install `requirements` for Python `python_version` into the new folder `site` (made whole, or not at
    all); `what` names them in errors."""
    site.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{site.name}-", dir=site.parent))
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                               "--no-compile", "--target", str(staging), "--python-version", python_version,
                               "--only-binary", ":all:", *requirements], capture_output=True, text=True)
        if done.returncode != 0:
            raise SandboxError(f"pip install of {what} failed (exit {done.returncode}):\n"
                               f"{(done.stdout + done.stderr)[-3000:]}")
        for script in (staging / "bin").glob("*") if (staging / "bin").is_dir() else ():
            text = script.read_bytes()
            if text.startswith(b"#!"):  # pip wrote the host interpreter's path; the sandbox has its own
                script.write_bytes(b"#!/usr/bin/env python3" + text[text.index(b"\n"):])
        readable(staging)
        staging.rename(site)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def readable(tree: Path) -> None:
    """World-readable (and the folders searchable), for sandboxes that run as another uid."""
    for path in [tree, *tree.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))


@cache
def host_python_version() -> str:
    """The version (`3.11`) of the host's own `/usr/bin/python3`, the local sandbox's Python."""
    done = subprocess.run(["/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SandboxError(f"the host has no working /usr/bin/python3, which the local sandbox runs: {done.stderr}")
    return done.stdout.strip()
