"""Checks polar's layers with import-linter (the contracts are `[tool.importlinter]` in pyproject.toml).

polar's packages live in the repository's top-level folders (`package-dir` in pyproject.toml), which import-linter
cannot follow from a checkout: it reads a package from one folder. So this lays the sources out as an install does,
in a temporary folder, and runs `lint-imports` on that copy.
Usage: python3 scripts/lint_imports.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lay_out(target: Path) -> None:
    """The Python sources of every package in `package-dir`, where an installed wheel would put them."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in mapping.items():
        destination = target.joinpath(*package.split("."))
        destination.mkdir(parents=True, exist_ok=True)
        for source in (ROOT / folder).glob("*.py"):
            shutil.copy2(source, destination / source.name)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="polar-layers-") as where:
        lay_out(Path(where))
        env = {**os.environ, "PYTHONPATH": where}
        command = [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
                   str(ROOT / "pyproject.toml"), "--no-cache", "--no-logo"]
        return subprocess.run(command, cwd=where, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
