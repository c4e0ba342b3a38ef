"""The Debian 13 root that the harnesses needing Python >= 3.12 (Terminus-2, OpenHands) run from, in any sandbox.

This machine's Python is 3.11 and the tasks' systems (the host's /usr, a task's image) are whatever they are, so the
harness brings its own: a minimal Debian 13 (`debootstrap`, the same path as polar's images, `sandbox/images.py`)
with Python 3.13 and tmux, built once per machine under polar's cache and mounted read-only at `ROOT` in every
sandbox, local or docker, beside the harness's pip install. Its programs run with the root's own dynamic loader and
libraries (`run_from`), so neither the sandbox's system nor the task's environment changes: the agent's shell, the
task's python3 and the verifier stay the task's own, and only the harness process is Debian 13's.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

from polar.cache import cache_dir, locked
from polar.envs.sandbox.images import bootstrap
from polar.errors import HarnessError
from polar.harnesses.external import TOOLS_DIR, ExternalHarness, run_install
from polar.protocols import Mount

SUITE = "trixie"
PYTHON = "3.13"
"""Its Python's version, for which the harnesses' packages are resolved."""
PACKAGES = ("python3", "python3-pip-whl", "tmux", "ca-certificates")
"""Python 3.13 for the harness, pip's wheel to install it with, tmux for Terminus-2's terminal."""
REVISION = "1"
"""How the root is made; a root of another revision is built again beside it."""
ROOT = f"{TOOLS_DIR}/debian13"
"""Where the root is mounted in sandboxes."""
LOADER = "lib64/ld-linux-x86-64.so.2"
LIBRARIES = "usr/lib/x86_64-linux-gnu"
WRAPPERS = "polar-bin"
"""The root's folder of commands that run its programs from `ROOT` (`python3`, `tmux`), for a sandbox's PATH."""


def root_dir() -> Path:
    return cache_dir("roots") / f"debian13-r{REVISION}"


def run_from(root: str, program: str) -> list[str]:
    """The argv prefix that runs `program` (a path inside the root) on any Linux system: through the root's own
    loader and libraries, whatever libc the system around it has."""
    return [f"{root}/{LOADER}", "--library-path", f"{root}/{LIBRARIES}", f"{root}/{program}"]


def ensure_root() -> Path:
    """Build the root once per machine (about a minute; concurrent processes wait on a lock). It is built in place:
    sandboxes bind-mount the folder before it fills (`Debian13Harness.sandbox_mounts`)."""
    root = root_dir()
    if (root / ".built").exists():
        return root
    with locked(root.parent / f".{root.name}.lock"):
        if not (root / ".built").exists():
            root.mkdir(parents=True, exist_ok=True)  # emptied, not replaced: a sandbox may have it mounted already
            for leftover in root.iterdir():  # a build that was cut short
                shutil.rmtree(leftover) if leftover.is_dir() and not leftover.is_symlink() else leftover.unlink()
            bootstrap(root, SUITE, PACKAGES, "the harnesses' Debian 13 root")
            wrappers = root / WRAPPERS
            wrappers.mkdir()
            for name, program in (("python3", f"usr/bin/python{PYTHON}"), ("tmux", "usr/bin/tmux")):
                (wrappers / name).write_text(f'#!/bin/sh\nexec {shlex.join(run_from(ROOT, program))} "$@"\n')
                (wrappers / name).chmod(0o755)
            (root / ".built").write_text(REVISION)
    return root


class Debian13Harness(ExternalHarness):
    """A PyPI harness that runs on the Debian 13 root's Python, installed by that Python's pip into a site folder."""

    installer = "pip"
    bin = f"local/lib/python{PYTHON}/dist-packages"
    """The site folder under the install's `--prefix` (Debian's Python installs there: its `posix_local` scheme),
    which the runners put first on their `sys.path`."""
    no_deps: tuple[str, ...] = ()
    """Pinned packages installed after the package without their declared dependencies."""
    BUILD = ("setuptools==84.2.1", "wheel==0.48.0")
    """What a package that comes only as source (func-timeout) builds with, offline."""

    def ensure_installed(self) -> Path:
        ensure_root()
        return super().ensure_installed()

    def install_into(self, target: Path) -> None:
        """Download on the host, install without network. This machine's pip resolves the pins for Python 3.13
        (`pip download --python-version 3.13`, with the machine's own pip settings, which also keep its resolver
        from backtracking); the root's own pip, run with the root as `/` (bubblewrap, `--no-index`), installs them,
        so what comes as source builds for the root's Python. `--prefix`, not `--target`: the second install merges
        into the first's namespace packages."""
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise HarnessError(f"installing {self.name} needs bubblewrap: run `apt-get install bubblewrap`")
        wheels = target / "wheels"
        download = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--python-version",
                    PYTHON, "-d", str(wheels)]
        run_install([*download, "--only-binary=:all:", self.install], self.install)
        run_install([*download, "--no-deps", *self.no_deps, *self.BUILD], " ".join(self.no_deps))
        pip_wheel = next((root_dir() / "usr/share/python-wheels").glob("pip-*.whl"))
        pip = [bwrap, "--bind", str(root_dir()), "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
               "--bind", str(target), str(target), "--unshare-net", "--setenv", "HOME", "/tmp", f"python{PYTHON}",
               f"/usr/share/python-wheels/{pip_wheel.name}/pip", "install", "-q", "--disable-pip-version-check",
               "--no-index", "--find-links", str(wheels), "--prefix", str(target)]
        run_install([*pip, self.install], self.install)
        if self.no_deps:
            run_install([*pip, "--no-deps", *self.no_deps], " ".join(self.no_deps))
        shutil.rmtree(wheels)

    def sandbox_mounts(self) -> tuple[Mount, ...]:
        root_dir().mkdir(parents=True, exist_ok=True, mode=0o755)
        return (*super().sandbox_mounts(), Mount(str(root_dir()), ROOT))

    def python(self, args: str) -> str:
        """A shell command that runs the root's Python 3.13 with `args` (-s: no user site-packages from $HOME), with
        the root's commands (tmux) on PATH after the sandbox's own, so the agent's shell keeps the task's programs."""
        return f'PATH="$PATH:{ROOT}/{WRAPPERS}" {ROOT}/{WRAPPERS}/python3 -s {args}'


def main() -> None:
    """Build the root and install every registered harness that runs on it, once (scripts/debian13.sh)."""
    from polar.harnesses import HARNESSES, make_harness  # the registry imports the adapters, which import this

    for name in HARNESSES:
        harness = make_harness(name)
        if isinstance(harness, Debian13Harness):
            print(f"debian13: {harness.install} in {harness.ensure_installed()}")
