"""SWE-bench's table of what each repository's tests need, keyed by (repo, version), as data.

SWE-bench's harness builds a row's environment from this table: the Python version, the packages, the install
command, the test command. swebench 5.x no longer ships it; 4.1.0 does (`swebench/harness/constants/python.py`,
`MAP_REPO_VERSION_TO_SPECS_PY`), for every Python repository of SWE-bench, Lite and Verified. `swebench_specs.json`
holds that mapping exactly, with its source named beside it; `python -m polar.envs.swe.swebench_specs` rewrites it
from the package (downloaded with pip, never imported: the one constants module is run on its own).

`environment_from_spec` turns an entry into what a polar environment of a repository mirror needs (its pip
requirements and its pytest command); the Python version and the install command are carried but not yet applied.
"""

from __future__ import annotations

import argparse
import functools
import json
import shlex
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("swebench_specs.json")
PACKAGE = "swebench==4.1.0"
MODULE = "swebench/harness/constants/python.py"
MAPPING = "MAP_REPO_VERSION_TO_SPECS_PY"
FILES_OF_THE_REPOSITORY = ("requirements.txt", "environment.yml")
"""`packages` values that name a file of the repository rather than packages (not read yet)."""


@functools.cache
def table() -> dict[str, dict[str, dict[str, Any]]]:
    """{repo: {version: spec}} as the package ships it."""
    return json.loads(TABLE.read_text(encoding="utf-8"))["specs"]


def spec_for(repo: str, version: str) -> dict[str, Any] | None:
    return table().get(repo, {}).get(str(version))


def environment_from_spec(spec: dict[str, Any], pytest: str, test_files: str) -> tuple[list[str], str]:
    """The pip requirements and the test command (`pytest` in the place of the spec's `pytest`, then its arguments,
    then `test_files`) of a spec; ValueError naming the runner when its tests do not run under pytest (django's
    runtests.py, sympy's bin/test, sphinx's tox), which polar cannot grade yet."""
    command = spec.get("test_cmd", "")
    command = command[-1] if isinstance(command, list) else command
    words = shlex.split(command)
    if not words or words[0] != "pytest":
        raise ValueError(f"SWE-bench runs its tests with {command!r}; polar grades pytest runs only")
    packages = spec.get("packages", "")
    listed = [] if packages in FILES_OF_THE_REPOSITORY else shlex.split(packages)
    requirements = [*dict.fromkeys([*spec.get("pip_packages", []), *listed, "pytest"])]
    return requirements, " ".join([pytest, *map(shlex.quote, words[1:]), test_files])


def read_mapping(source: str) -> dict[str, dict[str, dict[str, Any]]]:
    """`MAP_REPO_VERSION_TO_SPECS_PY` of the constants module's source (which imports nothing), as JSON values."""
    namespace: dict[str, Any] = {}
    exec(compile(source, MODULE, "exec"), namespace)  # noqa: S102 - a constants module of a pinned release
    return json.loads(json.dumps(namespace[MAPPING]))


def regenerate(out: Path = TABLE) -> Path:
    """Download the pinned swebench wheel with pip and write its table to `out`."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                        PACKAGE, "-d", folder], check=True)
        (wheel,) = Path(folder).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            specs = read_mapping(archive.read(MODULE).decode())
    out.write_text(json.dumps({"source": f"{PACKAGE}, {MODULE}, {MAPPING}", "licence": "MIT (SWE-bench)",
                               "regenerate": "python -m polar.envs.swe.swebench_specs", "specs": specs},
                              indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="rewrite swebench_specs.json from " + PACKAGE)
    parser.add_argument("--out", type=Path, default=TABLE)
    path = regenerate(parser.parse_args().out)
    specs = json.loads(path.read_text(encoding="utf-8"))["specs"]
    print(f"wrote {path}: {len(specs)} repositories, {sum(map(len, specs.values()))} (repo, version) specs")


if __name__ == "__main__":
    main()
